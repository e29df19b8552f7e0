import FCMSimulator
import Foundation

/// A test Firebase project: a service account with a fixed RSA key (made for these tests; it signs nothing real),
/// its key file as the Firebase console exports it, and an FCM simulator that knows it.
public enum TestFCM {
    public static let projectID = "herald-test"
    public static let clientEmail = "herald-sender@herald-test.iam.gserviceaccount.com"
    public static let privateKeyID = "0123456789abcdef0123456789abcdef01234567"

    /// The key's private half, PKCS#8 PEM.
    public static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDQyN6t+YRUh9cj
        U6uH9M2GXc1lwma5tDUSpgFAyD6suxtbQVDhFesOJv/r90v1XVrEwJJqSet04fgU
        QS1PkVXbD7GmA08ATD0mRpzfwwidM43wRckE1FmteWmiNdgdd+eECCizl+jL1Etr
        xe/Erwtlo/ob/JJKBtMtIho7M5tMmSFxgGzXsxrUO2lXwfkGlMaSPS2NdqbvWG3N
        qpTaSzi4KzY0Ko3kBHkPeCBu8ntzIRDyuqX2yPFURpKiU1ATrxdIfP8UKVgm7RBq
        c2NipEQ2vi2PVu4tZZczktUL7L2NsS53oOWbXddOLSdPPpeiia3PnmAf/cBWGEtK
        dL5oZMlZAgMBAAECggEAFC9XV/qHkKSRaBjuvHYuaI8pDG1/APUrLGJgPKMfbBOq
        0We/KgO0denPVEDUVyRvYhY8EYqT+PjfwxWKC+dBJayewC4RtTWps8mf4QI6Evip
        AFG+3XiqMttKGySZgD/XYixnwvUszIf5wrGgPKOvtmPkClCg1AdU40gowRB8Mytt
        /jXhE8U9FBJwm6fzvXJl5/m2XH2POSO2tbvTiO/c91rGREJ4o1IRyD+lkOGLdyoC
        d0JHB3Uw8/voPLOS81d+S4LE5tIUAN0QgMQ2fajdJxio+Hij5wn/pUaJsoCWcd8g
        WF+OdenI5U0bjanHcKsUe7iCIkd82OyYsDmtqxcLAQKBgQD4mU3tAaqa2ZZ7RqK/
        lxUABvdmtoQrbwqcF/NguPo5ryLQy2xc8YzYitJQFT/xbguyujHTuXJIoGZeyxZ9
        B2UCqOcMSjECQ+jbdq42x6V1lL/hZ9T1sTjFcqz555fkPjVg4nbuFp/iOG313Bzo
        G4MIVJo3bUQBgKEnGf/PdckH8wKBgQDXAB8iWvMh3ZKjzOW2oazkgjzLHUDgubh9
        7yYFZGlSyLhUo91Yyz8trVE3He90Vaua7/BTI6H0nWBa7WL62XFy4sZqpNbtr+cP
        i3+1lI6IK3SZCbSKmVnNQfDjLkJi6Hh7LbvKsQPS2/gMKoMYeqQs9pzPslY5pT7V
        cvJuwUlogwKBgHL+HwCx06PbYHNXojKzhSBFGK2nYY3hyGuZ3JdyGTUToSwp3M9F
        YJxN4qjum2xnNfwPirrgPk//+jqBAL8G65+GV5Hkw7TDivPxevaV9SBllTiD2gto
        VdVnjUHv8d+/MtvFBbRuPLjc12hxz+FB0KPK1qcq4Nk9Ec5PhXgGiN4nAoGBAISu
        MoiFEB4KGwCy5eA7DfNG3DWMrAkDE/PDrfcN7GGGNRsmtOajJy4NE12sP6XPaMOI
        5wqnpr7KkDgM31Rm9Dgt8rzFVU4Bi9pwADQSpZMrHh2De8M8t8qPsxS/64AWbqO1
        qXqAmxd5YC5B3f0xUjfdSRBzwfp5G7ml4i6vYZn5AoGAd7Ju4dzcMXbX1FNBcA5J
        HkZV+XXRD1xNBFOMdTbMDwFxx4Av7hQgRC0RRL7D7gh7eahwyWHT/jn1ZsEUooqn
        zNBQ0gCH1hGoMu/O3Sya3GoHnt0YmvjdzGXJB99bsh3fq4YrgvBVuMUcBMcbab5R
        K/zeUX+lyPFSyaDsL75F0EI=
        -----END PRIVATE KEY-----
        """

    /// The key's public half, SPKI PEM.
    public static let publicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA0MjerfmEVIfXI1Orh/TN
        hl3NZcJmubQ1EqYBQMg+rLsbW0FQ4RXrDib/6/dL9V1axMCSaknrdOH4FEEtT5FV
        2w+xpgNPAEw9Jkac38MInTON8EXJBNRZrXlpojXYHXfnhAgos5foy9RLa8XvxK8L
        ZaP6G/ySSgbTLSIaOzObTJkhcYBs17Ma1DtpV8H5BpTGkj0tjXam71htzaqU2ks4
        uCs2NCqN5AR5D3ggbvJ7cyEQ8rql9sjxVEaSolNQE68XSHz/FClYJu0QanNjYqRE
        Nr4tj1buLWWXM5LVC+y9jbEud6Dlm13XTi0nTz6Xoomtz55gH/3AVhhLSnS+aGTJ
        WQIDAQAB
        -----END PUBLIC KEY-----
        """

    /// The service account key file, minting at `tokenURI` (the simulator's `/token`).
    public static func serviceAccountJSON(tokenURI: String) -> String {
        let object: [String: String] = [
            "type": "service_account", "project_id": projectID, "private_key_id": privateKeyID,
            "private_key": privateKeyPEM + "\n", "client_email": clientEmail, "client_id": "1234567890",
            "token_uri": tokenURI,
        ]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// A simulator configuration on a free loopback port that knows the test service account.
    public static func simulatorConfiguration() -> FCMSimulatorConfiguration {
        FCMSimulatorConfiguration(
            certificateChainPEM: TestCredentials.serverCertificatePEM,
            privateKeyPEM: TestCredentials.serverPrivateKeyPEM,
            serviceAccounts: [
                clientEmail: .init(publicKeyPEM: publicKeyPEM, projectID: projectID, keyID: privateKeyID)
            ])
    }

    /// A registration token of the usual shape, different for each `number`.
    public static func registrationToken(_ number: Int) -> String {
        "d\(number)Xq:APA91b" + String(repeating: "Fk3_Hs-9", count: 17) + String(number)
    }
}
