// The tuning database: records to JSON Lines and back. Course module 5.
//
// A record is one JSON object on one line, its fields in a fixed order (the order of
// TuningRecord), so that files diff and read well:
//
//   {"version":1,"workload":"5f0c1d2e3a4b6978","task":"gemm","target":"llvm -mcpu=znver4",
//    "trace":"b0 = get_block(\"C\")\n...","decisions":{"C.tile_k":[64,16]},
//    "times_us":[812.1,815.0],"median_us":813.5,"error":"","flops":2097152.0,"trial":3,
//    "time":"2026-11-30T18:02:11Z"}
//
// A finalist timed again at the end of a run (tuner.h, step 5) adds `"remeasured":true`
// after `time`; the field is written only then, and a record without it is a first timing.
// Reading is otherwise strict: every field must be there with its type, and the version must
// be kRecordVersion. A file that is not what the tuner wrote stops the load with the file,
// the line and the field, rather than tuning resuming from half a database.
//
// Appending: each add() on an attached database opens the file in append mode, writes the
// line and its newline with one write, flushes and closes. A tuner killed between two
// measurements therefore leaves whole lines only, and nothing stays buffered in memory.
//
// Chapter: docs/module5-autotuning.md#7-the-database
#include "minic/autotune/database.h"

#include "minic/support/error.h"
#include "minic/support/file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace minic::autotune {
namespace {

// ordered_json keeps the fields in the order they are written.
using Json = nlohmann::ordered_json;

// The field `name` of a record's object, or an Error naming the field.
const Json& field(const Json& object, const char* name, const std::string& where) {
  auto found = object.find(name);
  if (found == object.end()) fail("{}: record has no field '{}'", where, name);
  return *found;
}

std::string string_field(const Json& object, const char* name, const std::string& where) {
  const Json& value = field(object, name, where);
  if (!value.is_string()) {
    fail("{}: field '{}' should be a string, not {}", where, name, value.type_name());
  }
  return value.get<std::string>();
}

double number_field(const Json& object, const char* name, const std::string& where) {
  const Json& value = field(object, name, where);
  if (!value.is_number()) {
    fail("{}: field '{}' should be a number, not {}", where, name, value.type_name());
  }
  return value.get<double>();
}

int64_t integer_field(const Json& object, const char* name, const std::string& where) {
  const Json& value = field(object, name, where);
  if (!value.is_number_integer()) {
    fail("{}: field '{}' should be an integer, not {}", where, name, value.type_name());
  }
  return value.get<int64_t>();
}

std::vector<double> times_field(const Json& object, const std::string& where) {
  const Json& value = field(object, "times_us", where);
  if (!value.is_array()) {
    fail("{}: field 'times_us' should be an array, not {}", where, value.type_name());
  }
  std::vector<double> times;
  for (const Json& time : value) {
    if (!time.is_number()) fail("{}: field 'times_us' holds a {}", where, time.type_name());
    times.push_back(time.get<double>());
  }
  return times;
}

std::map<std::string, std::vector<int64_t>> decisions_field(const Json& object,
                                                            const std::string& where) {
  const Json& value = field(object, "decisions", where);
  if (!value.is_object()) {
    fail("{}: field 'decisions' should be an object, not {}", where, value.type_name());
  }
  std::map<std::string, std::vector<int64_t>> decisions;
  for (const auto& [knob, choice] : value.items()) {
    bool integers = choice.is_array();
    for (const Json& number : choice) integers = integers && number.is_number_integer();
    if (!integers) {
      fail("{}: field 'decisions': knob '{}' should be a list of integers", where, knob);
    }
    decisions[knob] = choice.get<std::vector<int64_t>>();
  }
  return decisions;
}

// Records are the same measurement when these agree (merge_databases).
using RecordIdentity = std::tuple<std::string, std::string, std::string, std::string>;

RecordIdentity identity_of(const TuningRecord& record) {
  return {record.workload_key, record.target, record.trace, record.time};
}

}  // namespace

std::string record_to_json(const TuningRecord& record) {
  Json object;
  object["version"] = kRecordVersion;
  object["workload"] = record.workload_key;
  object["task"] = record.task_name;
  object["target"] = record.target;
  object["trace"] = record.trace;
  object["decisions"] = Json::object();
  for (const auto& [knob, choice] : record.decisions) object["decisions"][knob] = choice;
  object["times_us"] = record.times_us;
  object["median_us"] = record.median_us;
  object["error"] = record.error;
  object["flops"] = record.flops;
  object["trial"] = record.trial;
  object["time"] = record.time;
  if (record.remeasured) object["remeasured"] = true;
  // dump() escapes newlines and quotes inside strings, so the record stays one line.
  return object.dump();
}

TuningRecord record_from_json(const std::string& line, const std::string& where) {
  Json object;
  try {
    object = Json::parse(line);
  } catch (const Json::parse_error& error) {
    fail("{}: not a JSON record: {}", where, error.what());
  }
  if (!object.is_object()) {
    fail("{}: a record should be a JSON object, not {}", where, object.type_name());
  }
  int64_t version = integer_field(object, "version", where);
  if (version != kRecordVersion) {
    fail("{}: record version {} (this minic reads version {}; tune again to refresh the "
         "database)",
         where, version, kRecordVersion);
  }
  TuningRecord record;
  record.workload_key = string_field(object, "workload", where);
  record.task_name = string_field(object, "task", where);
  record.target = string_field(object, "target", where);
  record.trace = string_field(object, "trace", where);
  record.decisions = decisions_field(object, where);
  record.times_us = times_field(object, where);
  record.median_us = number_field(object, "median_us", where);
  record.error = string_field(object, "error", where);
  record.flops = number_field(object, "flops", where);
  record.trial = static_cast<int>(integer_field(object, "trial", where));
  record.time = string_field(object, "time", where);
  if (object.contains("remeasured")) {
    const Json& field = object["remeasured"];
    if (!field.is_boolean()) fail("{}: field 'remeasured' should be true or false", where);
    record.remeasured = field.get<bool>();
  }
  return record;
}

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

Database Database::load(const std::string& path, bool missing_ok) {
  Database database;
  if (missing_ok && !std::filesystem::exists(path)) return database;
  std::istringstream lines(read_file(path));  // an Error naming the file if unreadable
  int line_number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    database.records_.push_back(record_from_json(line, fmt::format("{}:{}", path,
                                                                    line_number)));
  }
  return database;
}

void Database::add(TuningRecord record) {
  if (!attached_path_.empty()) {
    std::ofstream file(attached_path_, std::ios::app);
    file << record_to_json(record) + "\n";
    file.flush();
    if (!file) {
      fail("{}: cannot append a tuning record: {}", attached_path_, std::strerror(errno));
    }
  }
  records_.push_back(std::move(record));
}

void Database::attach(const std::string& path) {
  std::ofstream file(path, std::ios::app);  // creates it; keeps what is there
  if (!file) {
    fail("{}: cannot open the tuning database for appending: {}", path, std::strerror(errno));
  }
  attached_path_ = path;
}

// A re-measured record wins because the finalists were timed side by side, a first
// timing alone. Otherwise the strictly faster: among equal times the first measured stays,
// so the answer does not depend on how files were merged after it.
bool chosen_over(const TuningRecord& record, const TuningRecord& chosen) {
  if (record.remeasured != chosen.remeasured) return record.remeasured;
  return record.median_us < chosen.median_us;
}

std::optional<TuningRecord> Database::best(const std::string& workload_key,
                                           const Target& target) const {
  const std::string key = target.str();
  std::optional<TuningRecord> best;
  for (const TuningRecord& record : records_) {
    if (record.workload_key != workload_key || record.target != key || !record.ok()) {
      continue;
    }
    if (!best || chosen_over(record, *best)) best = record;
  }
  return best;
}

std::vector<TuningRecord> Database::of_workload(const std::string& workload_key,
                                                const Target& target) const {
  const std::string key = target.str();
  std::vector<TuningRecord> found;
  for (const TuningRecord& record : records_) {
    if (record.workload_key == workload_key && record.target == key) found.push_back(record);
  }
  return found;
}

std::vector<std::string> Database::workloads() const {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const TuningRecord& record : records_) {
    if (seen.insert(record.workload_key).second) keys.push_back(record.workload_key);
  }
  return keys;
}

void Database::save(const std::string& path) const {
  std::string text;
  for (const TuningRecord& record : records_) text += record_to_json(record) + "\n";
  write_file(path, text);
}

Database merge_databases(const std::vector<Database>& databases) {
  Database merged;
  std::set<RecordIdentity> seen;
  for (const Database& database : databases) {
    for (const TuningRecord& record : database.records()) {
      if (seen.insert(identity_of(record)).second) merged.add(record);
    }
  }
  return merged;
}

Database best_records(const Database& database) {
  // One slot per workload and target, in the order of their first successful record.
  std::vector<TuningRecord> best;
  std::map<std::pair<std::string, std::string>, size_t> slot_of;
  for (const TuningRecord& record : database.records()) {
    if (!record.ok()) continue;
    auto [slot, inserted] =
        slot_of.try_emplace({record.workload_key, record.target}, best.size());
    if (inserted) {
      best.push_back(record);
    } else if (chosen_over(record, best[slot->second])) {
      best[slot->second] = record;
    }
  }
  Database result;
  for (TuningRecord& record : best) result.add(std::move(record));
  return result;
}

}  // namespace minic::autotune
