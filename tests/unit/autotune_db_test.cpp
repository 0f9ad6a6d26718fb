// Tests of the tuning database: records to JSON and back, loading and appending JSON Lines
// files, the errors of a bad file, and the queries (best, of_workload, merge,
// best_records). Course module 5.
#include "minic/autotune/database.h"

#include "minic/support/error.h"
#include "minic/support/file.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <regex>

namespace minic::autotune {
namespace {

namespace fs = std::filesystem;

// A file name in the temporary directory, unique to this process, removed at the end.
class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_((fs::temp_directory_path() / fmt::format("minic-db-{}-{}", getpid(), name))
                  .string()) {
    fs::remove(path_);
  }
  ~TempFile() { fs::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A CPU target named `name`: the database compares targets by their text only.
Target cpu(const char* name) {
  CpuTarget target;
  target.cpu = name;
  return Target(target);
}

TuningRecord make_record(const std::string& workload, const std::string& target,
                         double median_us, int trial) {
  TuningRecord record;
  record.workload_key = workload;
  record.task_name = "task_" + workload;
  record.target = target;
  record.trace = fmt::format("b0 = get_block(\"C\")\ni, j = get_loops(b0)\n# trial {}", trial);
  record.decisions = {{"C.tile_j", {2, 4, 16}}, {"C.parallel", {trial % 2}}};
  record.times_us = {median_us * 1.01, median_us, median_us * 0.99 + 0.5};
  record.median_us = median_us;
  record.flops = 2.0 * 64 * 64 * 64;
  record.trial = trial;
  record.time = fmt::format("2026-11-30T18:{:02}:00Z", trial % 60);
  return record;
}

TuningRecord make_failed_record(const std::string& workload, const std::string& target,
                                int trial) {
  TuningRecord record = make_record(workload, target, 0, trial);
  record.times_us.clear();
  record.median_us = 0;
  record.error = "timed out after 10 s";
  return record;
}

void require_same(const TuningRecord& actual, const TuningRecord& expected) {
  CHECK(actual.workload_key == expected.workload_key);
  CHECK(actual.task_name == expected.task_name);
  CHECK(actual.target == expected.target);
  CHECK(actual.trace == expected.trace);
  CHECK(actual.decisions == expected.decisions);
  CHECK(actual.times_us == expected.times_us);
  CHECK(actual.median_us == expected.median_us);
  CHECK(actual.error == expected.error);
  CHECK(actual.flops == expected.flops);
  CHECK(actual.trial == expected.trial);
  CHECK(actual.time == expected.time);
  CHECK(actual.remeasured == expected.remeasured);
}

void require_same(const std::vector<TuningRecord>& actual,
                  const std::vector<TuningRecord>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) require_same(actual[i], expected[i]);
}

// `action` must throw an Error whose message contains every one of `parts`.
void require_error(const std::function<void()>& action, const std::vector<std::string>& parts) {
  try {
    action();
    FAIL("expected an Error");
  } catch (const Error& error) {
    std::string message = error.what();
    for (const std::string& part : parts) {
      INFO(message);
      CHECK(message.find(part) != std::string::npos);
    }
  }
}

TEST_CASE("a record round-trips through one line of JSON", "[autotune_db]") {
  TuningRecord record = make_record("5f0c1d2e3a4b6978", "llvm -mcpu=znver4", 812.123456789, 17);
  // Strings that JSON must escape: quotes, backslashes, newlines, tabs, non-ASCII.
  record.trace = "b0 = get_block(\"C\")\n\ti0, i1 = split(i, [-1, 32])\n# \\ naïve \"q\"\r\n";
  record.task_name = "conv \"3x3\"\nrelu";
  record.decisions = {{"C.tile_i", {2, 16, 8}}, {"C.order", {0}}, {"odd \"knob\"", {-1}}};
  record.flops = 231211008;
  std::string line = record_to_json(record);
  CHECK(line.find('\n') == std::string::npos);
  require_same(record_from_json(line, "test:1"), record);

  TuningRecord failed = make_failed_record("5f0c1d2e3a4b6978", "llvm -mcpu=znver4", 3);
  failed.decisions.clear();
  TuningRecord read = record_from_json(record_to_json(failed), "test:2");
  require_same(read, failed);
  CHECK_FALSE(read.ok());
  CHECK(record_from_json(record_to_json(record), "test:3").ok());
}

TEST_CASE("a record of another version is an error naming the place", "[autotune_db]") {
  std::string line = record_to_json(make_record("aa", "t", 10, 0));
  std::string version = fmt::format("\"version\":{}", kRecordVersion);
  REQUIRE(line.find(version) != std::string::npos);
  line.replace(line.find(version), version.size(),
               fmt::format("\"version\":{}", kRecordVersion + 1));
  require_error([&] { record_from_json(line, "db.jsonl:7"); },
                {"db.jsonl:7", fmt::format("version {}", kRecordVersion + 1)});
}

TEST_CASE("a malformed record names the file, the line and the field", "[autotune_db]") {
  std::string good = record_to_json(make_record("aa", "t", 10, 0));

  SECTION("not JSON") {
    TempFile file("malformed.jsonl");
    write_file(file.path(), good + "\n\n{\"version\": 1, \"workload\": \n" + good + "\n");
    require_error([&] { Database::load(file.path()); }, {file.path() + ":3"});
  }
  SECTION("a missing field") {
    std::string line = good;
    size_t start = line.find("\"median_us\"");
    REQUIRE(start != std::string::npos);
    line.erase(start, line.find(',', start) + 1 - start);
    require_error([&] { record_from_json(line, "f.jsonl:2"); }, {"f.jsonl:2", "'median_us'"});
  }
  SECTION("a field of the wrong type") {
    std::string line = good;
    std::string trial = "\"trial\":0";
    REQUIRE(line.find(trial) != std::string::npos);
    line.replace(line.find(trial), trial.size(), "\"trial\":\"0\"");
    require_error([&] { record_from_json(line, "f.jsonl:4"); }, {"f.jsonl:4", "'trial'"});
  }
  SECTION("not an object") {
    require_error([&] { record_from_json("[1, 2]", "f.jsonl:1"); }, {"f.jsonl:1", "object"});
  }
}

TEST_CASE("a missing database file is an error unless allowed", "[autotune_db]") {
  TempFile file("missing.jsonl");
  require_error([&] { Database::load(file.path()); }, {file.path()});
  CHECK(Database::load(file.path(), /*missing_ok=*/true).records().empty());
}

TEST_CASE("an attached database appends every record at once", "[autotune_db]") {
  TempFile file("append.jsonl");
  std::vector<TuningRecord> first = {make_record("aa", "t", 30, 0),
                                     make_failed_record("aa", "t", 1)};
  Database database;
  database.attach(file.path());
  for (const TuningRecord& record : first) database.add(record);
  // On disk already, before the database is saved or destroyed.
  require_same(Database::load(file.path()).records(), first);

  // Attaching again (a resumed run) keeps what is there and appends after it.
  Database resumed = Database::load(file.path());
  resumed.attach(file.path());
  TuningRecord later = make_record("bb", "t", 12.5, 0);
  resumed.add(later);
  std::vector<TuningRecord> all = first;
  all.push_back(later);
  require_same(Database::load(file.path()).records(), all);
  require_same(resumed.records(), all);

  // An unattached database writes nothing.
  Database memory_only;
  memory_only.add(later);
  require_same(Database::load(file.path()).records(), all);
}

TEST_CASE("save writes every record and load reads them back", "[autotune_db]") {
  TempFile file("save.jsonl");
  Database database;
  database.add(make_record("aa", "t", 30, 0));
  database.add(make_failed_record("bb", "t", 0));
  database.save(file.path());
  database.save(file.path());  // replaces, does not append
  require_same(Database::load(file.path()).records(), database.records());
}

TEST_CASE("best, of_workload and workloads answer per workload and target",
          "[autotune_db]") {
  Database database;
  database.add(make_record("aa", cpu("cpu1").str(), 30, 0));
  database.add(make_failed_record("aa", cpu("cpu1").str(), 1));
  database.add(make_record("bb", cpu("cpu1").str(), 5, 0));
  database.add(make_record("aa", cpu("cpu1").str(), 20, 2));
  database.add(make_record("aa", cpu("cpu2").str(), 10, 0));
  database.add(make_record("aa", cpu("cpu1").str(), 20, 3));  // as fast as trial 2: the first stays
  database.add(make_failed_record("cc", cpu("cpu1").str(), 0));

  std::optional<TuningRecord> best = database.best("aa", cpu("cpu1"));
  REQUIRE(best);
  CHECK(best->median_us == 20);
  CHECK(best->trial == 2);
  REQUIRE(database.best("aa", cpu("cpu2")));
  CHECK(database.best("aa", cpu("cpu2"))->median_us == 10);
  CHECK_FALSE(database.best("cc", cpu("cpu1")));  // nothing ran
  CHECK_FALSE(database.best("aa", cpu("cpu3")));
  CHECK_FALSE(database.best("dd", cpu("cpu1")));

  std::vector<TuningRecord> of_aa = database.of_workload("aa", cpu("cpu1"));
  REQUIRE(of_aa.size() == 4);
  CHECK(of_aa[0].trial == 0);
  CHECK(of_aa[1].trial == 1);
  CHECK(of_aa[2].trial == 2);
  CHECK(of_aa[3].trial == 3);
  CHECK(database.of_workload("dd", cpu("cpu1")).empty());
  CHECK(database.workloads() == std::vector<std::string>{"aa", "bb", "cc"});
}

TEST_CASE("merge keeps every record once, in the order met", "[autotune_db]") {
  TuningRecord a = make_record("aa", "t", 30, 0);
  TuningRecord b = make_record("aa", "t", 20, 1);
  TuningRecord c = make_record("bb", "t", 5, 0);
  TuningRecord b_later = b;  // the same schedule measured again later: kept
  b_later.time = "2026-12-01T09:00:00Z";
  Database first;
  first.add(a);
  first.add(b);
  Database second;
  second.add(b);
  second.add(c);
  second.add(b_later);
  second.add(a);
  require_same(merge_databases({first, second}).records(), {a, b, c, b_later});
  CHECK(merge_databases({}).records().empty());
}

TEST_CASE("best_records keeps the fastest record of each workload and target",
          "[autotune_db]") {
  Database database;
  database.add(make_failed_record("zz", "t", 0));  // never ran: no best
  database.add(make_record("aa", "t", 30, 0));
  database.add(make_record("bb", "t", 7, 0));
  database.add(make_record("aa", "t", 20, 1));
  database.add(make_record("aa", "u", 40, 0));
  database.add(make_record("aa", "t", 25, 2));
  database.add(make_record("bb", "t", 6, 1));
  Database best = best_records(database);
  REQUIRE(best.records().size() == 3);
  require_same(best.records()[0], database.records()[3]);  // aa on t: 20 us
  require_same(best.records()[1], database.records()[6]);  // bb on t: 6 us
  require_same(best.records()[2], database.records()[4]);  // aa on u: the only one
}

TEST_CASE("a re-measured record is chosen over faster first timings", "[autotune_db]") {
  const std::string target = cpu("cpu1").str();
  TuningRecord lucky = make_record("aa", target, 10, 0);  // timed once, alone, fast
  TuningRecord slow_final = make_record("aa", target, 20, 1);
  slow_final.remeasured = true;
  TuningRecord fast_final = make_record("aa", target, 15, 2);
  fast_final.remeasured = true;
  TuningRecord other = make_record("bb", target, 7, 0);  // no finalists: its fastest
  Database database;
  for (const TuningRecord& record : {lucky, slow_final, fast_final, other}) database.add(record);
  std::optional<TuningRecord> best = database.best("aa", cpu("cpu1"));
  REQUIRE(best);
  require_same(*best, fast_final);
  require_same(*database.best("bb", cpu("cpu1")), other);
  Database best_of_each = best_records(database);
  REQUIRE(best_of_each.records().size() == 2);
  require_same(best_of_each.records()[0], fast_final);
  require_same(best_of_each.records()[1], other);

  // The field is written only when true, and read back.
  std::string line = record_to_json(fast_final);
  CHECK(line.find("\"remeasured\":true") != std::string::npos);
  CHECK(record_to_json(lucky).find("remeasured") == std::string::npos);
  require_same(record_from_json(line, "test:1"), fast_final);
  CHECK_FALSE(record_from_json(record_to_json(lucky), "test:2").remeasured);
  std::string wrong = line;
  wrong.replace(wrong.find("true"), 4, "1");
  require_error([&] { record_from_json(wrong, "db.jsonl:4"); }, {"db.jsonl:4", "remeasured"});
}

TEST_CASE("utc_timestamp is ISO 8601 in UTC", "[autotune_db]") {
  std::string time = utc_timestamp();
  INFO(time);
  CHECK(std::regex_match(time, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

}  // namespace
}  // namespace minic::autotune
