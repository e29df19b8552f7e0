import ArgumentParser
import HeraldCore
import HeraldStore

/// Streams devices into the store in batches (memory holds one batch, not the file), then analyses the devices
/// table: the bulk load's last step, so that the first job after it is planned with statistics of the devices it
/// loaded, not of the table before (`Store.analyzeDevices`).
package struct DeviceImporter: Sendable {
    let store: Store
    let app: String
    let batchSize: Int

    /// - Parameter batchSize: devices per COPY (memory holds one batch).
    package init(store: Store, app: String, batchSize: Int) {
        self.store = store
        self.app = app
        self.batchSize = batchSize
    }

    /// What an import did.
    package struct Summary: Sendable {
        /// Devices written.
        package var imported = 0
        /// Rows rejected, with their line numbers.
        package var errors: [DeviceCSV.RowError] = []
        /// Rows left out because their token is registered on the other platform (or as the other kind of Android
        /// identifier): an import never changes a device's platform.
        package var platformConflicts = 0
        /// Why the table could not be analysed after the import (the devices are imported all the same).
        package var analysisError: StoreError?
    }

    /// Imports a CSV file (header token,user_id,locale,topics, optionally followed by platform and fcm_kind, and
    /// then by p256dh, auth and expiration_time); bad rows are counted and skipped.
    package func run(_ lines: LineReader, progress: (Int) -> Void) async throws -> Summary {
        var summary = Summary()
        var batch: [DeviceRecord] = []
        batch.reserveCapacity(batchSize)
        var lineNumber = 0
        var columns = DeviceCSV.header.count
        var lines = lines
        while let line = lines.next() {
            lineNumber += 1
            if lineNumber == 1 {
                columns = try DeviceCSV.validateHeader(line)
                continue
            }
            do {
                if let record = try DeviceCSV.parse(line, lineNumber: lineNumber, columns: columns) {
                    batch.append(record)
                }
            } catch {
                summary.errors.append(error)
            }
            if batch.count >= batchSize {
                try await write(batch, into: &summary)
                batch.removeAll(keepingCapacity: true)
                progress(summary.imported)
            }
        }
        guard lineNumber > 0 else { throw ValidationError("the CSV file is empty: it needs the header line") }
        if !batch.isEmpty { try await write(batch, into: &summary) }
        await analyze(&summary)
        return summary
    }

    /// Imports a JSON Lines file of web subscriptions (`DeviceJSONLines`: one object per line, each with its
    /// `PushSubscription.toJSON()`), in the same COPY batches; a bad line, or one over
    /// `DeviceJSONLines.maximumLineBytes`, is counted with its number and skipped, the others are imported.
    package func runJSONLines(_ lines: LineReader, progress: (Int) -> Void) async throws -> Summary {
        var summary = Summary()
        var batch: [DeviceRecord] = []
        batch.reserveCapacity(batchSize)
        var lineNumber = 0
        var lines = lines
        while let line = lines.next(maximumBytes: DeviceJSONLines.maximumLineBytes) {
            lineNumber += 1
            do throws(DeviceCSV.RowError) {
                switch line {
                case .line(let text):
                    if let record = try DeviceJSONLines.parse(text, lineNumber: lineNumber) { batch.append(record) }
                case .tooLong(let bytes):
                    throw DeviceCSV.RowError(
                        line: lineNumber,
                        message: "the line is \(bytes) bytes; at most \(DeviceJSONLines.maximumLineBytes)")
                }
            } catch {
                summary.errors.append(error)
            }
            if batch.count >= batchSize {
                try await write(batch, into: &summary)
                batch.removeAll(keepingCapacity: true)
                progress(summary.imported)
            }
        }
        if !batch.isEmpty { try await write(batch, into: &summary) }
        await analyze(&summary)
        return summary
    }

    /// Imports devices already in hand (`herald demo`, `herald bench pipeline`) the way the command imports a file.
    package func run(records: some Sequence<DeviceRecord>) async throws -> Summary {
        var summary = Summary()
        var batch: [DeviceRecord] = []
        batch.reserveCapacity(batchSize)
        for record in records {
            batch.append(record)
            if batch.count >= batchSize {
                try await write(batch, into: &summary)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try await write(batch, into: &summary) }
        await analyze(&summary)
        return summary
    }

    /// One COPY batch.
    private func write(_ batch: [DeviceRecord], into summary: inout Summary) async throws {
        let counts = try await store.importDevicesCounting(batch, app: app)
        summary.imported += counts.written
        summary.platformConflicts += counts.platformConflicts
    }

    /// The rows are committed whatever happens here: a failure is reported, not thrown, so that nobody imports
    /// again (which would reset the devices' badges and registration times) for want of statistics.
    private func analyze(_ summary: inout Summary) async {
        guard summary.imported > 0 else { return }
        do {
            try await store.analyzeDevices()
        } catch {
            summary.analysisError = error
        }
    }
}
