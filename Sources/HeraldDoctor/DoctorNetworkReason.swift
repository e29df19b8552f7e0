import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Why a TCP or TLS connection failed, as a few words for a sentence: "connection refused", "the certificate is not
/// trusted", … — never the error's own description, which for TLS is BoringSSL's internal error stack.
enum DoctorNetworkReason {
    /// What the TLS handshake's failure means, if `error` is one.
    enum TLS: Equatable {
        /// The peer's certificate did not verify against the trust roots (or did not name the host).
        case untrusted
        /// The peer ended the handshake with an alert: it refused something of ours (say, our client certificate).
        case alert(String)
        /// The port does not speak TLS.
        case notTLS
        /// Any other handshake failure.
        case failed
    }

    /// `error` as a TLS failure, or nil if it is not one.
    static func tls(_ error: any Error) -> TLS? {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname { return .untrusted }
        guard error is NIOSSLError || error is BoringSSLError else { return nil }
        // BoringSSL names its reasons in upper case within the error stack: classify by them, print none of it.
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") { return .untrusted }
        if text.contains("WRONG_VERSION_NUMBER") || text.contains("HTTP_REQUEST") { return .notTLS }
        if let range = text.range(of: "ALERT_") {
            let name = text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            return .alert(name.lowercased().replacingOccurrences(of: "_", with: " "))
        }
        return .failed
    }

    /// A few words on why connecting failed.
    static func describe(_ error: any Error) -> String {
        if let tls = tls(error) {
            switch tls {
            case .untrusted: return "its TLS certificate is not trusted"
            case .alert(let name): return "the server ended the TLS handshake with the alert \"\(name)\""
            case .notTLS: return "it does not speak TLS on that port"
            case .failed: return "the TLS handshake failed"
            }
        }
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return describe(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name does not resolve" }
            return "the host name has no address"
        }
        if let error = error as? IOError {
            return String(cString: strerror(error.errnoCode)).lowercased()
        }
        if let error = error as? ChannelError, case .connectTimeout(let limit) = error {
            return "no answer within \(limit.nanoseconds / 1_000_000_000) s"
        }
        if error is SocketAddressError { return "the host name does not resolve" }
        if let error = error as? ChannelError, error == .ioOnClosedChannel || error == .eof {
            return "the connection was closed"
        }
        return "\(type(of: error))"
    }
}
