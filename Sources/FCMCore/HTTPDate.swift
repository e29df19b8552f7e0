/// HTTP-date (RFC 9110 §5.6.7) to seconds since 1970, without Foundation's clock or calendars.
enum HTTPDate {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// Parses the three forms; `now` resolves RFC 850's two-digit year (a year more than 50 years ahead is taken
    /// as the previous century's).
    static func parse(_ text: some StringProtocol, now: Int64) -> Int64? {
        let parts = text.split(separator: " ")
        switch parts.count {
        case 6:  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard parts[0].hasSuffix(","), shortDays.contains(String(parts[0].dropLast())), parts[1].count == 2,
                parts[3].count == 4, parts[5] == "GMT", let day = number(parts[1]), let month = month(parts[2]),
                let year = number(parts[3])
            else { return nil }
            return epoch(year: year, month: month, day: day, time: parts[4])
        case 4:  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let date = parts[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts[0].hasSuffix(","), longDays.contains(String(parts[0].dropLast())), date.count == 3,
                date[0].count == 2, date[2].count == 2, parts[3] == "GMT", let day = number(date[0]),
                let month = month(date[1]), let shortYear = number(date[2])
            else { return nil }
            let currentYear = civilYear(of: now)
            var year = currentYear - currentYear % 100 + shortYear
            if year > currentYear + 50 { year -= 100 }
            return epoch(year: year, month: month, day: day, time: parts[2])
        case 5:  // asctime: Sun Nov  6 08:49:37 1994
            guard shortDays.contains(String(parts[0])), (1...2).contains(parts[2].count), parts[4].count == 4,
                let month = month(parts[1]), let day = number(parts[2]), let year = number(parts[4])
            else { return nil }
            return epoch(year: year, month: month, day: day, time: parts[3])
        default:
            return nil
        }
    }

    /// The value of a field of ASCII digits only (`Int` alone would take a sign).
    private static func number(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy(FCMRetryAfter.isDigit) else { return nil }
        return Int(text)
    }

    private static func month(_ name: some StringProtocol) -> Int? {
        months.firstIndex(of: String(name)).map { $0 + 1 }
    }

    /// Seconds since 1970 of a valid date and `hh:mm:ss` time (GMT); nil for any field out of range.
    private static func epoch(year: Int, month: Int, day: Int, time: some StringProtocol) -> Int64? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 && $0.utf8.allSatisfy(FCMRetryAfter.isDigit) }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            hour < 24, minute < 60, second <= 60, (1...9999).contains(year), day >= 1,
            day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian year of `seconds` since 1970 (Hinnant's `civil_from_days`, year only).
    static func civilYear(of seconds: Int64) -> Int {
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400) + 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        return yearOfEra + era * 400 + (monthIndex >= 10 ? 1 : 0)
    }
}
