// # WebPushCore
//
// Web Push (RFC 8030, 8291, 8292) as values, with no I/O: what Herald needs to send to browsers' push services
// (Chrome's FCM, Mozilla's autopush, Apple's web.push.apple.com, Windows' WNS). The transport, the simulator and
// the settlement table are built on it; it depends only on swift-crypto.
//
// - Subscriptions: `WebPushSubscription` (`PushSubscription.toJSON()`), its `WebPushEndpoint` (an https capability
//   URL: `origin` keys connections and tokens, `redacted` is what logs show) and `WebPushKeys` (`p256dh`, `auth`).
// - Encryption: `WebPushEncryption.encrypt(_:for:paddingTo:)` makes the request body, RFC 8291 `aes128gcm` in one
//   record with a fresh P-256 key and salt per message; at most 3,993 bytes of plaintext fit the 4,096-byte body.
//   `decrypt(_:privateKey:auth:)` does what a browser does, for tests and tools. A test holds it to the RFC's
//   worked example byte for byte: a wrongly encrypted body is still answered 201 and silently dropped by the browser.
// - VAPID: `VAPIDKey` (loaded from PEM, SEC1 or PKCS#8; `applicationServerKey` for `pushManager.subscribe`; `keyID`
//   to log and to store with subscriptions), `VAPIDSubject` (Apple's rules for `sub`), `VAPIDToken` (the JWT and the
//   `Authorization: vapid t=…, k=…` header) and `VAPIDTokenCache` (one token per push-service origin, renewed an
//   hour before its expiry, single-flight).
// - Request headers: `WebPushTTL` (always sent, clamped to four weeks), `WebPushUrgency`, `WebPushTopic` (Apple's
//   rules; `derived(from:)` turns any collapse id into a valid topic).
// - Payload: `WebPushNotification.json(declarative:)`, the service-worker form or Declarative Web Push.
// - Answers: `WebPushAnswer` (status, reason, `Retry-After`) and its `Kind`: accepted, gone (prune), payload too
//   large, rate limited (429, WNS's 406), unavailable, bad request, credentials (the job stops), other.
//
// Nothing here logs, and no error or description holds a key, a token, a payload or a whole endpoint.
