import Foundation

/// CPU time (user plus system), for the benchmarks' CPU per notification: a regression shows in it even when the
/// machine is too noisy for the rates to.
enum CPUTime {
    /// This process's, every thread, in seconds (getrusage RUSAGE_SELF).
    static func ofThisProcess() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The calling thread's, in seconds (getrusage RUSAGE_THREAD).
    static func ofThisThread() -> Double {
        var usage = rusage()
        // RUSAGE_THREAD (1), which Glibc's Swift overlay does not name.
        getrusage(Int32(1), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// A running process's, in seconds: `utime` plus `stime` of /proc/PID/stat; nil if it cannot be read.
    static func ofProcess(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) / ticks : nil
    }
}
