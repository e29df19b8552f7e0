/// Fixed credentials for tests only: a test CA, a server certificate for 127.0.0.1/localhost signed by it, and
/// APNs-style P-256 provider keys. Generated once with openssl (valid for 100 years); never used outside tests.
public enum TestCredentials {
    public static let caCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBmjCCAT+gAwIBAgIUIc6/jKp2AKa/xgLQmfu1LzWkHBkwCgYIKoZIzj0EAwIw
        GTEXMBUGA1UEAwwOSGVyYWxkIFRlc3QgQ0EwIBcNMjYxMTIxMTE1NTA0WhgPMjEy
        NjEwMjgxMTU1MDRaMBkxFzAVBgNVBAMMDkhlcmFsZCBUZXN0IENBMFkwEwYHKoZI
        zj0CAQYIKoZIzj0DAQcDQgAEpBNjj82knAg+DxbycgAGjeJE6fcKDbPN6ToD7Ct9
        0KZmgYVvVxX5Gtl1hEwGfbCPZAIhvG6qxifNbs9Z/8bgK6NjMGEwHQYDVR0OBBYE
        FHRaqwAPGyzNrKoP7eiur/l+OuhGMB8GA1UdIwQYMBaAFHRaqwAPGyzNrKoP7eiu
        r/l+OuhGMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49
        BAMCA0kAMEYCIQDyvxuCQevUCJqe0WeSMQHq5XB62e0ExC5RM/OkUDWEkwIhAK+V
        qnVItKY9P+jZTXpJ0R4eaTyEl1k3kfH5E390lOhf
        -----END CERTIFICATE-----
        """

    public static let serverCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBvzCCAWSgAwIBAgIUHaoDLxA/5KiVd8I3OqrJ4ywT+VQwCgYIKoZIzj0EAwIw
        GTEXMBUGA1UEAwwOSGVyYWxkIFRlc3QgQ0EwIBcNMjYxMTIxMTE1NTA1WhgPMjEy
        NjEwMjgxMTU1MDVaMBQxEjAQBgNVBAMMCWxvY2FsaG9zdDBZMBMGByqGSM49AgEG
        CCqGSM49AwEHA0IABAmauSHOpS7AuhPlAzELvwb3DeCmXSItYY/VKj5Dg1NDw8ny
        HQa4+1WV5392RblVLK8Yi2aGeBznF/1rG+JjtJajgYwwgYkwGgYDVR0RBBMwEYcE
        fwAAAYIJbG9jYWxob3N0MAkGA1UdEwQCMAAwEwYDVR0lBAwwCgYIKwYBBQUHAwEw
        CwYDVR0PBAQDAgeAMB0GA1UdDgQWBBTqDCcxJ5xQOg3JvVcWeg+8PcF9hzAfBgNV
        HSMEGDAWgBR0WqsADxsszayqD+3orq/5fjroRjAKBggqhkjOPQQDAgNJADBGAiEA
        71PQSpjyAokPtyS1v0EVlhwnEUE5U4pTvOtgafR9XyECIQC9T1YzhC66TjhnrNJu
        otioMHlmgCFWLOY51Jx8O+5/jQ==
        -----END CERTIFICATE-----
        """

    public static let serverPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgKoqbaFSSTKC8NfMV
        QkTrsikNyeMrorc4VYgvD615q6ihRANCAAQJmrkhzqUuwLoT5QMxC78G9w3gpl0i
        LWGP1So+Q4NTQ8PJ8h0GuPtVled/dkW5VSyvGItmhngc5xf9axviY7SW
        -----END PRIVATE KEY-----
        """

    public static let providerKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+BgYRSBAbmUglrn+
        jkZPhY1Cd6N0DX2H5F4uxX0k0MahRANCAAQRsD/0MqmdcxQJTFfi+N7Jkl4vJyoj
        DdGpnOcCiGNFPQRsTm69hCKHc8AidseV4uKJrWl+1PKIWzvELi9+S1np
        -----END PRIVATE KEY-----
        """

    public static let secondProviderKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgCm491xd1HSu024YB
        ZEdpb1qUrrQqk3da8Jgj24o0hmehRANCAASp2JopUsQxpw2NAcTTuCC34eOJzyqS
        whnL1v+yFnhUXP6f4/xrgvdthch6giOooXeGnTaQ72CxdXrZF+88PX4K
        -----END PRIVATE KEY-----
        """

    public static let unrelatedCACertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBhDCCASugAwIBAgIUY4jgVezxi3fPI9Tlwy+CdIzeN9swCgYIKoZIzj0EAwIw
        FzEVMBMGA1UEAwwMVW5yZWxhdGVkIENBMCAXDTI2MTEyMTExNTUwNVoYDzIxMjYx
        MDI4MTE1NTA1WjAXMRUwEwYDVQQDDAxVbnJlbGF0ZWQgQ0EwWTATBgcqhkjOPQIB
        BggqhkjOPQMBBwNCAASZqVSDj4VYhvV+bXstwZs66On61izgeZ+yNSOU9ml4E2Xh
        /GFsyq3M7J9YqjyH7zfmcwxEpTKG2cwRYgK+cguBo1MwUTAdBgNVHQ4EFgQUIpLE
        xRruLyO5IEDlqimCRTJWW8MwHwYDVR0jBBgwFoAUIpLExRruLyO5IEDlqimCRTJW
        W8MwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiBfN1ETJaiyQR53
        f4mF1kMylsFiotCAQRtgOWcktjqVggIgS7WVDWS+xWHSfiOzhvhGrvQAvtxtlCuD
        TDL/AfnByL0=
        -----END CERTIFICATE-----
        """

    /// The team id the test provider keys belong to.
    public static let teamID = "TEAM123456"
    /// The key id of `providerKeyPEM`.
    public static let keyID = "KEY1234567"
    /// The key id of `secondProviderKeyPEM`.
    public static let secondKeyID = "KEY7654321"
}
