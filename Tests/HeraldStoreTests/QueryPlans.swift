import Foundation
import HeraldStore
import NIOCore
import PostgresNIO
import Testing

// How QueryPlanTests reads PostgreSQL's plans and what it holds them to.

extension QueryPlanTests {
    /// Records an issue naming the statement, what is wrong and the plan, if `plan` does not meet `expected`.
    static func check(
        _ name: String,
        _ plan: PlanNode,
        _ expected: PlanExpectation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let problems = expected.problems(in: plan)
        #expect(
            problems.isEmpty, "\(name): \(problems.joined(separator: "; ")) in \(plan.outline)",
            sourceLocation: sourceLocation)
    }

    /// The plan PostgreSQL makes for `query` with its parameters (a custom plan: what an unnamed statement gets),
    /// with `settings` in force in its transaction as the store sets them.
    static func explain(
        _ query: PostgresQuery,
        settings: [(String, String)] = [],
        on store: Store
    ) async throws -> PlanNode {
        try await store.client.withTransaction(logger: logger) { connection in
            try await connection.setForTransaction(settings, logger: logger)
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) " + query.sql, binds: query.binds), logger: logger)
            return try await plan(from: rows)
        }
    }

    /// The generic plan of `sql` as a prepared statement (PREPARE infers the parameters' types from the casts and
    /// columns they meet), with `settings` in force as the statement's owner sets them.
    static func genericPlan(
        of sql: String,
        name: String,
        types: [String]? = nil,
        settings: [(String, String)] = [],
        on store: Store
    ) async throws -> PlanNode {
        let parameters = types?.count ?? parameterCount(in: sql)
        return try await store.client.withTransaction(logger: logger) { connection in
            try await connection.setForTransaction(
                settings + [("plan_cache_mode", "force_generic_plan")], logger: logger)
            let typeList = types.map { "(" + $0.joined(separator: ", ") + ")" } ?? ""
            try await connection.query(
                PostgresQuery(unsafeSQL: "PREPARE \(name)\(typeList) AS \(sql)"), logger: logger)
            // A generic plan does not depend on the values: NULL for each.
            let arguments = Array(repeating: "NULL", count: parameters).joined(separator: ", ")
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: "EXPLAIN (FORMAT JSON) EXECUTE \(name)" + (parameters > 0 ? "(\(arguments))" : "")),
                logger: logger)
            let plan = try await Self.plan(from: rows)
            try await connection.query(PostgresQuery(unsafeSQL: "DEALLOCATE \(name)"), logger: logger)
            return plan
        }
    }

    /// The generic plans of a PL/pgSQL function's `RETURN QUERY` statements, as the function runs them: its
    /// arguments as typed parameters, its own settings (`SET` clauses) in force. The function's text is read from
    /// the database, as the migrations left it.
    static func genericPlans(ofFunction function: String, on store: Store) async throws -> [PlanNode] {
        let rows = try await store.client.query(
            """
            SELECT p.prosrc, p.proargnames, coalesce(p.proargmodes::text[], '{}'),
                   ARRAY(SELECT format_type(a.type, NULL) FROM unnest(p.proargtypes) WITH ORDINALITY AS a(type, n)
                         ORDER BY a.n),
                   coalesce(p.proconfig, '{}')
            FROM pg_proc p WHERE p.proname = \(function)
            """,
            logger: logger)
        var found: (String, [String], [String], [String], [String])? = nil
        for try await row in rows.decode((String, [String], [String], [String], [String]).self) { found = row }
        let (source, names, modes, types, config) = try #require(found, "no function \(function)")
        // The arguments (modes i, b, v, or none given), in order: what `proargtypes` lists.
        let inputs = names.enumerated().filter { modes.isEmpty || ["i", "b", "v"].contains(modes[$0.offset]) }.map(
            \.element)
        #expect(inputs.count == types.count, "\(function): arguments \(inputs), types \(types)")
        let settings = config.map { entry -> (String, String) in
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
        var plans: [PlanNode] = []
        for (index, statement) in returnQueries(in: source).enumerated() {
            let sql = parameterised(statement, arguments: inputs)
            plans.append(
                try await genericPlan(
                    of: sql, name: "plan_test_\(function)_\(index)", types: types, settings: settings, on: store))
        }
        return plans
    }

    /// The statements of `RETURN QUERY …;` in a PL/pgSQL body (none of Herald's has a semicolon inside a statement).
    static func returnQueries(in source: String) -> [String] {
        let pattern = try! NSRegularExpression(
            pattern: #"RETURN\s+QUERY\s+(.*?);"#, options: [.caseInsensitive, .dotMatchesLineSeparators])
        let text = source as NSString
        return pattern.matches(in: source, range: NSRange(location: 0, length: text.length)).map {
            text.substring(with: $0.range(at: 1))
        }
    }

    /// `statement` with each reference to an argument (a bare name, not a column `x.name`) as `$n`, which is what
    /// PL/pgSQL makes of them.
    static func parameterised(_ statement: String, arguments: [String]) -> String {
        var sql = statement
        for (index, name) in arguments.enumerated() {
            let pattern = try! NSRegularExpression(
                pattern: #"(?<![.\w])"# + NSRegularExpression.escapedPattern(for: name) + #"(?!\w)"#)
            sql = pattern.stringByReplacingMatches(
                in: sql, range: NSRange(location: 0, length: (sql as NSString).length), withTemplate: "\\$\(index + 1)")
        }
        return sql
    }

    /// The highest `$n` in `sql`.
    static func parameterCount(in sql: String) -> Int {
        let pattern = try! NSRegularExpression(pattern: #"\$(\d+)"#)
        let text = sql as NSString
        return pattern.matches(in: sql, range: NSRange(location: 0, length: text.length)).compactMap {
            Int(text.substring(with: $0.range(at: 1)))
        }.max() ?? 0
    }

    static func plan(from rows: PostgresRowSequence) async throws -> PlanNode {
        var explained: [ExplainedPlan] = []
        for try await buffer in rows.decode(ByteBuffer.self) {
            explained = try JSONDecoder().decode([ExplainedPlan].self, from: Data(buffer.readableBytesView))
        }
        return try #require(explained.first).plan
    }
}

/// One element of `EXPLAIN (FORMAT JSON)`.
struct ExplainedPlan: Decodable {
    var plan: PlanNode

    enum CodingKeys: String, CodingKey {
        case plan = "Plan"
    }
}

/// A node of a plan, with what the checks read.
struct PlanNode: Decodable {
    var nodeType: String
    var relationName: String?
    var indexName: String?
    var indexCondition: String?
    var functionName: String?
    var plans: [PlanNode]?

    enum CodingKeys: String, CodingKey {
        case nodeType = "Node Type"
        case relationName = "Relation Name"
        case indexName = "Index Name"
        case indexCondition = "Index Cond"
        case functionName = "Function Name"
        case plans = "Plans"
    }

    /// This node and every node under it.
    var all: [PlanNode] { [self] + (plans ?? []).flatMap(\.all) }

    /// The plan on one line, for failure messages: `Limit(Sort(Bitmap Heap Scan devices(…)))`.
    var outline: String {
        var label = nodeType
        if let relationName { label += " " + relationName }
        if let indexName { label += " using " + indexName }
        if let functionName { label += " " + functionName }
        guard let plans, !plans.isEmpty else { return label }
        return label + "(" + plans.map(\.outline).joined(separator: ", ") + ")"
    }
}

/// What a statement's plan must look like.
struct PlanExpectation {
    /// Tables a scan of which reads rows the statement does not want, unless it is an index scan with a condition.
    static let tables: Set<String> = ["devices", "jobs", "batches"]

    /// A job found by its key: through the primary key (id, app), by both columns or by id alone (the same row, and the
    /// rows of other apps that use the id).
    static let job = ["jobs_pkey"]

    /// Indexes read by an Index Scan or Index Only Scan with an index condition (a probe or a range): one of each
    /// list.
    var indexes: [[String]] = []
    /// Partial indexes read whole: they hold only the rows the statement wants (each must be read).
    var wholeIndexes: [String] = []
    /// Functions the statement calls in its FROM list.
    var functions: [String] = []
    /// Rows come in index order: no sort anywhere (a sort reads every row it sorts before returning the first).
    var ordered = false

    /// What is wrong with `plan`; empty if nothing.
    func problems(in plan: PlanNode) -> [String] {
        var problems: [String] = []
        let nodes = plan.all
        for alternatives in indexes {
            let probes = nodes.contains {
                ["Index Scan", "Index Only Scan"].contains($0.nodeType) && alternatives.contains($0.indexName ?? "")
                    && $0.indexCondition != nil
            }
            if !probes { problems.append("no index scan of \(alternatives.joined(separator: " or "))") }
        }
        for index in wholeIndexes where !nodes.contains(where: { $0.indexName == index }) {
            problems.append("no scan of \(index)")
        }
        for function in functions where !nodes.contains(where: { $0.functionName == function }) {
            problems.append("no call of \(function)")
        }
        for node in nodes {
            guard let relation = node.relationName, Self.tables.contains(relation) else { continue }
            switch node.nodeType {
            case "Index Scan", "Index Only Scan":
                if node.indexCondition == nil, !wholeIndexes.contains(node.indexName ?? "") {
                    problems.append("a full index scan of \(relation)")
                }
            case "ModifyTable":
                break
            case "Bitmap Heap Scan"
            where node.all.contains { $0.nodeType == "Bitmap Index Scan" && wholeIndexes.contains($0.indexName ?? "") }:
                // Its own bitmap comes from a partial index read whole: only wanted rows.
                break
            default:
                problems.append("\(node.nodeType) of \(relation)")
            }
        }
        for node in nodes where ["Hash Join", "Merge Join", "Materialize"].contains(node.nodeType) {
            problems.append(node.nodeType)
        }
        if ordered {
            for node in nodes where ["Sort", "Incremental Sort"].contains(node.nodeType) {
                problems.append(node.nodeType)
            }
        }
        return problems
    }
}
