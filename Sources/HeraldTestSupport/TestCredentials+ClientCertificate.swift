import Foundation

/// A client CA and a client certificate signed by it, as a PKCS#12 bundle, for certificate (mTLS) auth tests.
/// Generated once with openssl (P-256; `openssl pkcs12 -export -certpbe PBE-SHA1-3DES -keypbe PBE-SHA1-3DES
/// -macalg sha1`); the client CA's private key was discarded. Valid until 2126.
extension TestCredentials {
    /// The CA that signed ``clientCertificateP12`` (PEM): the simulator's trust root for client certificates.
    public static let clientCACertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBlTCCATygAwIBAgITIm3DoeOINAD0ePCekKgbLFAs6DAKBggqhkjOPQQDAjAg
        MR4wHAYDVQQDDBVIZXJhbGQgVGVzdCBDbGllbnQgQ0EwIBcNMjYxMTIxMTM0NDM0
        WhgPMjEyNjEwMjgxMzQ0MzRaMCAxHjAcBgNVBAMMFUhlcmFsZCBUZXN0IENsaWVu
        dCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABAFu3jmbq9Dip+HcDC4mKyLP
        PuaFz5bWdQveRtQbBXBm265xx6U6ipWxKE81sftyDCnwPbofCLHGIm8jYO1e5PCj
        UzBRMB0GA1UdDgQWBBTN3xHdPUJJIL0WiJaqW9F+JWLHCjAfBgNVHSMEGDAWgBTN
        3xHdPUJJIL0WiJaqW9F+JWLHCjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMC
        A0cAMEQCICpr7Tr8py++81x7yInsZ2kFDB3LcmHfufRHB9l2DVbUAiBVSrWXSK6D
        mf2pmuZF2Jj1ImIcvYmPyMx/lk8iGVv3eQ==
        -----END CERTIFICATE-----
        """

    /// The passphrase of ``clientCertificateP12``.
    public static let clientCertificatePassphrase = "herald-test"

    /// A PKCS#12 bundle with the client certificate `CN=Apple Push Services: com.example.app` and its key.
    public static var clientCertificateP12: [UInt8] {
        Array(Data(base64Encoded: clientCertificateP12Base64)!)
    }

    private static let clientCertificateP12Base64 =
        "MIIDwgIBAzCCA4gGCSqGSIb3DQEHAaCCA3kEggN1MIIDcTCCAmcGCSqGSIb3DQEHBqCCAlgwggJUAgEAMIICTQYJKoZIhvcNAQcB"
        + "MBwGCiqGSIb3DQEMAQMwDgQIRbv1r6Fg5QECAggAgIICIAQFNLWc7Kg7tKijPWA7nYKllod83TFrtdiY1GMSw4nT+ORFyYdNkIZt"
        + "GbdAjamn34w4rYEBL+BAz99SaFMM4lDEfqcnp2QjxRFCGQ7edchbi7gcqSy/JgJpdqFueH8uQjhbPf2lGdFYTs3QmbavFNpGWNBc"
        + "261QrCtrjg/ASi02vBr9vBs/1O4a6E7iMoqy8XeHfvQdVma+2+vrsDZzctrjMyu+cSavoHVLdQgVpPiwdtHO5/IJv0aTEro4gpPV"
        + "YlDuReoilkP7ql86X3ZMuRrMsyOE6d7suJUm2yaEYrA9fySKh9x0sECf1F80SmBqFROQblu9Zhz4UDqg5U7Qj4NgqGN0X10i96vH"
        + "Uj+DHukDfuP17Sy1mB42m2CfekRQO/IFA55IuzhFa+hw0XWaNkshOJtU00UEG2UHRsZclBqPggSeyS/3r2P9ERHglHXkPQucI8EI"
        + "yfNJTvBq3te0iXFMXqz2oyu3vhfHzI029tfhik7neHVUUGIZB8r3KBamFkSqbYGC+s2bXUZvfsyjd1ll0QjQAC9L2NkaqpX0sBTv"
        + "S4cjQLg9Tn/rTkANdkX/69RxRO5qUQimCHB0i/2X8MWf6PMFqRJ1/aRmFwPNfFS2aXHFnTEIDB/bV3hmCjcG5VkoQ0dl+bX2GCBQ"
        + "pLohIBdlb7brgHSjRr0JRLpQDs7j5THhBUUw+W+Soz5hzaW1nL3deoRKvYdFumqmPpB08EYwggECBgkqhkiG9w0BBwGggfQEgfEw"
        + "ge4wgesGCyqGSIb3DQEMCgECoIG0MIGxMBwGCiqGSIb3DQEMAQMwDgQIb02K06rVJUMCAggABIGQY969SOQG7wRJ2PqA1/z2WrUx"
        + "/O/9WZSRQoajUrrHTUKoFHryT1IuKPxp/p+bcRY68gRnLrJKKsFAek46GP/+Y4Mixzb/dGnCb+Yw3JPJuqHgieToDsaepfayPZwo"
        + "zFSVDVWj/YIAJuoXDcTthR6yXM8jLlG4WeyEiAncFFv9XKxWu2GY3kBWo6xMvxeuNiJ9MSUwIwYJKoZIhvcNAQkVMRYEFOEd/F3D"
        + "rKeTMNkhi63akzksLRFqMDEwITAJBgUrDgMCGgUABBS7k5k7SzM/VgcbPHGCwbzaSq0FEAQI5DgPFcYr1uACAggA"
}
