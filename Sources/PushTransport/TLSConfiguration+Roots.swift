import NIOSSL

extension TLSConfiguration {
    /// A client's TLS: 1.2 or later, certificates verified against the system roots plus those in `pems` (a custom
    /// CA, from configuration only). A PEM that holds no certificate adds nothing, so a server only it would vouch
    /// for fails verification rather than being trusted.
    public static func client(trustingAlso pems: [String]) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        let extra = pems.flatMap { pem in (try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))) ?? [] }
        if !extra.isEmpty { tls.additionalTrustRoots = [.certificates(extra)] }
        return tls
    }
}
