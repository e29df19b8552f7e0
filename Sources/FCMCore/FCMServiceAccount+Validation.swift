import Crypto
import _CryptoExtras

extension FCMServiceAccount {
    /// Checks a project id (6–30 lowercase letters, digits and hyphens, starting with a letter and not ending with
    /// a hyphen, as Google Cloud allows) or a numeric project number (1–20 digits).
    static func validateProjectID(_ value: String) throws(FCMServiceAccountError) {
        let bytes = Array(value.utf8)
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let isLower = { (byte: UInt8) in byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        if !bytes.isEmpty, bytes.count <= 20, bytes.allSatisfy(isDigit) { return }
        guard (6...30).contains(bytes.count),
            bytes.allSatisfy({ isDigit($0) || isLower($0) || $0 == UInt8(ascii: "-") }),
            isLower(bytes[0]), bytes[bytes.count - 1] != UInt8(ascii: "-")
        else {
            throw FCMServiceAccountError(
                .invalidField, field: "project_id",
                "is neither a project id (6–30 lowercase letters, digits and hyphens, starting with a letter) "
                    + "nor a project number")
        }
    }

    /// Reads the PEM key, refusing anything that is not an RSA private key of at least `minimumKeyBits` bits.
    /// The library's own error is not kept: it must not carry key material into a log.
    static func parsePrivateKey(_ pem: String) throws(FCMServiceAccountError) -> _RSA.Signing.PrivateKey {
        let key: _RSA.Signing.PrivateKey
        do {
            // The unsafe initialiser also reads 1024-bit keys, so that a short key is named as such below.
            key = try _RSA.Signing.PrivateKey(unsafePEMRepresentation: pem)
        } catch {
            throw FCMServiceAccountError(.invalidField, field: "private_key", "is not an RSA private key in PEM form")
        }
        guard key.keySizeInBits >= minimumKeyBits else {
            throw FCMServiceAccountError(
                .invalidField, field: "private_key",
                "is a \(key.keySizeInBits)-bit RSA key; at least \(minimumKeyBits) bits are required")
        }
        return key
    }

    /// Reads required and optional string fields, naming the field in its errors.
    struct FieldReader {
        let fields: [String: JSON]

        func optionalString(_ name: String) throws(FCMServiceAccountError) -> String? {
            switch fields[name] {
            case nil, .null?: return nil
            case .string(let value)?:
                guard !value.isEmpty else { throw FCMServiceAccountError(.invalidField, field: name, "is empty") }
                return value
            case _?: throw FCMServiceAccountError(.invalidField, field: name, "is not a string")
            }
        }

        func string(_ name: String) throws(FCMServiceAccountError) -> String {
            guard let value = try optionalString(name) else {
                throw FCMServiceAccountError(.missingField, field: name, "is missing")
            }
            return value
        }
    }
}
