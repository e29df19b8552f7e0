import HeraldCore
import Testing

@Suite struct NearestNameTests {
    @Test(arguments: [
        ("max_per_secnd", ["id", "topic", "max_per_second", "events"], "max_per_second"),
        ("sendAt", ["send_at", "target", "app"], "send_at"),
        ("colapse_id", ["collapse_id", "priority"], "collapse_id"),
        ("topc", ["id", "topic", "auth"], "topic"),
        ("enviroment", ["environment", "environments"], "environment"),
        ("evnets", ["events", "webhook"], "events"),
        ("com.exampel.news", ["com.example.news", "com.example.sports"], "com.example.news"),
    ])
    func aTypoIsMatchedToTheKnownName(_ typed: String, _ known: [String], _ expected: String) {
        #expect(NearestName.suggestion(for: typed, among: known) == expected)
    }

    @Test(arguments: [
        ("colour", ["id", "topic", "auth"]),
        ("x", ["id", "topic"]),
        ("anything", [String]()),
    ])
    func aNameNearNothingHasNoSuggestion(_ typed: String, _ known: [String]) {
        #expect(NearestName.suggestion(for: typed, among: known) == nil)
    }

    @Test func theNearestWinsAndATieGoesToTheFirstListed() {
        #expect(NearestName.suggestion(for: "key_idd", among: ["key_file", "key_id"]) == "key_id")
        #expect(NearestName.suggestion(for: "ab", among: ["ac", "ad"]) == "ac")
    }

    @Test func editDistanceCountsASwapOfNeighboursOnce() {
        #expect(NearestName.editDistance("kitten", "sitting") == 3)
        #expect(NearestName.editDistance("abcd", "acbd") == 1)
        #expect(NearestName.editDistance("", "abc") == 3)
        #expect(NearestName.editDistance("same", "same") == 0)
    }
}
