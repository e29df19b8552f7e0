/// FCM's rules for the recipient: token and FID formats, topic names, conditions.
enum TargetValidation {
    /// The shortest registration token accepted; real ones are about 150 characters.
    static let minimumTokenLength = 20
    /// The longest registration token accepted; anything longer is not a token.
    static let maximumTokenLength = 4096
    /// A FID is 22 base64url characters.
    static let fidLength = 22

    /// Checks a target's format.
    static func check(_ target: FCMSimulatorTarget) throws(GoogleError) {
        switch target {
        case .token(let token):
            guard (minimumTokenLength...maximumTokenLength).contains(token.utf8.count),
                token.utf8.allSatisfy({ isBase64URL($0) || $0 == UInt8(ascii: ":") })
            else {
                throw .invalidArgument(
                    "The registration token is not a valid FCM registration token", field: "message.token",
                    description: "Invalid registration token")
            }
        case .fid(let fid):
            guard fid.utf8.count == fidLength, fid.utf8.allSatisfy(isBase64URL) else {
                throw .invalidArgument(
                    "The Firebase Installation ID is not a valid FID", field: "message.fid", description: "Invalid FID")
            }
        case .topic(let topic):
            guard isTopicName(topic) else {
                throw .invalidArgument("Invalid topic name: \(SchemaCheck.bounded(topic))", field: "message.topic")
            }
        case .condition(let condition):
            guard isCondition(condition) else {
                throw .invalidArgument("Invalid condition expression provided.", field: "message.condition")
            }
        }
    }

    /// `[A-Za-z0-9_-]`.
    static func isBase64URL(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-")
    }

    /// `[a-zA-Z0-9-_.~%]+`, at most 900 characters.
    static func isTopicName(_ name: String) -> Bool {
        (1...900).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                isBase64URL($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "%")
            }
    }

    /// A condition names one to five topics, each as `'name' in topics`, and nothing outside the operators.
    static func isCondition(_ condition: String) -> Bool {
        guard (1...4096).contains(condition.utf8.count) else { return false }
        var rest = Substring(condition)
        var topics = 0
        while let open = rest.firstIndex(of: "'") {
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "'") else { return false }
            let between = rest[rest.startIndex..<open]
            guard between.allSatisfy({ "&|!() ".contains($0) }),
                isTopicName(String(rest[afterOpen..<close]))
            else { return false }
            rest = rest[rest.index(after: close)...].drop { $0 == " " }
            guard rest.hasPrefix("in topics") else { return false }
            rest = rest.dropFirst("in topics".count)
            topics += 1
        }
        return (1...5).contains(topics) && rest.allSatisfy { "&|!() ".contains($0) }
    }
}
