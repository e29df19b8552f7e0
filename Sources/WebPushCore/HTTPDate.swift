/// Reads an HTTP-date (RFC 9110 section 5.6.7) into seconds since 1970, without Foundation's date formatters:
/// the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms every recipient must still
/// accept (`Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`).
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Seconds since 1970, or nil when `text` is not an HTTP-date.
    package static func parse(_ text: String) -> Int64? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == "\t" })
        let day: Substring
        let month: Substring
        let year: Substring
        let time: Substring
        if tokens.count == 6, tokens[5] == "GMT" {
            (day, month, year, time) = (tokens[1], tokens[2], tokens[3], tokens[4])
        } else if tokens.count == 5 {
            (month, day, time, year) = (tokens[1], tokens[2], tokens[3], tokens[4])
        } else {
            return nil
        }
        guard let monthIndex = months.firstIndex(of: month.lowercased()),
            let dayNumber = number(day, digits: 1...2), (1...31).contains(dayNumber)
        else { return nil }
        let yearNumber: Int64
        if year.count == 2, let twoDigits = number(year, digits: 2...2) {
            // RFC 9110: a two-digit year more than 50 years ahead is in the past century; 70 stands in for "now".
            yearNumber = twoDigits < 70 ? 2000 + twoDigits : 1900 + twoDigits
        } else if let fourDigits = number(year, digits: 4...4) {
            yearNumber = fourDigits
        } else {
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, let hour = number(clock[0], digits: 2...2),
            let minute = number(clock[1], digits: 2...2),
            let second = number(clock[2], digits: 2...2), hour < 24, minute < 60, second <= 60
        else { return nil }
        let days = daysSince1970(year: yearNumber, month: Int64(monthIndex + 1), day: dayNumber)
        return days * 86400 + hour * 3600 + minute * 60 + second
    }

    private static func number(_ text: Substring, digits: ClosedRange<Int>) -> Int64? {
        guard digits.contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    package static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
