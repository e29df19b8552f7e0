import Foundation

/// An `application/x-www-form-urlencoded` body: names and values percent-decoded, `+` read as a space.
enum FormBody {
    /// The most parameters read; a token request has two.
    static let maximumParameters = 16

    /// The parameters by name (the first of repeated names wins); nil if the body is not a form.
    static func parse(_ body: [UInt8]) -> [String: String]? {
        guard let text = String(validating: body, as: UTF8.self) else { return nil }
        var parameters: [String: String] = [:]
        for pair in text.split(separator: "&", maxSplits: maximumParameters, omittingEmptySubsequences: true)
            .prefix(maximumParameters)
        {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { return nil }
            if parameters[name] == nil { parameters[name] = value }
        }
        return parameters
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
