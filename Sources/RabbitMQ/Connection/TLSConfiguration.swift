/// TLS for `amqps://`: the broker's certificate is always verified (chain and host name) against a CA.
public struct AMQPTLSConfiguration: Sendable, Hashable {
    /// The default trust store of Debian and Ubuntu, used when no CA file is given.
    public static let systemCABundle = "/etc/ssl/certs/ca-certificates.crt"

    /// PEM file with the CA certificate(s) that signed the broker's certificate.
    public var caCertificatePath: String
    /// PEM client certificate, for brokers that require one (with `keyPath`).
    public var certificatePath: String?
    /// PEM private key of the client certificate; never logged.
    public var keyPath: String?

    /// Creates a TLS configuration; peer and host-name verification cannot be switched off.
    public init(caCertificatePath: String = Self.systemCABundle, certificatePath: String? = nil, keyPath: String? = nil)
    {
        self.caCertificatePath = caCertificatePath
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }
}
