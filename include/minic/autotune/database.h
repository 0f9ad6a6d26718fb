// The tuning database: measured schedules, one JSON object a line.
//
// Course module 5. Every candidate the tuner measures becomes a record, appended to a
// JSON Lines file as soon as it is timed, so a tuning run that stops (Ctrl-C, a crash, the
// budget) loses nothing and `minic tune --resume` goes on from the file. A record:
//
//   {"version": 1, "workload": "5f0c1d2e3a4b6978", "task": "conv_relu",
//    "target": "llvm -mcpu=znver4", "trace": "b0 = get_block(\"C\")\n...",
//    "decisions": {"C.tile_i": [2, 4, 8], ...}, "times_us": [812.1, 815.0, 812.5],
//    "median_us": 812.5, "error": "", "flops": 231211008, "trial": 17,
//    "time": "2026-11-30T18:02:11Z"}
//
// `target` is the text of the Target the candidate was made and timed for
// (include/minic/target/target.h): a record serves only that target, whose vector width
// and registers its schedule was sized for.
// `trace` is the schedule as trace text (trace.h): replayed on the task's function it
// gives the measured kernel. `decisions` are the search space's choices that made the
// trace (search_space.h), kept so that a resumed search can mutate them; a record without
// them (the default schedule) is still replayable. A failed candidate has an `error` and
// no times. `version` is checked on load: a record of another version is an error.
//
// `minic db show|best|merge` reads and writes these files.
//
// Chapter: docs/module5-autotuning.md#7-the-database
#pragma once

#include "minic/target/target.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace minic::autotune {

constexpr int kRecordVersion = 1;

struct TuningRecord {
  std::string workload_key;
  std::string task_name;
  std::string target;                                   // Target::str()
  std::string trace;                                    // trace text
  std::map<std::string, std::vector<int64_t>> decisions;  // empty: not from the space
  std::vector<double> times_us;                         // empty when it failed
  double median_us = 0;
  std::string error;                                    // empty when it ran
  double flops = 0;
  int trial = 0;      // the trial's number within its task, from 0
  std::string time;   // UTC, ISO 8601, when it was measured
  // A finalist timed again at the end of a tuning run, side by side with the others (its
  // trial is the one it was first timed in). Database::best chooses among these first.
  bool remeasured = false;

  bool ok() const { return error.empty() && !times_us.empty(); }
};

// One record as one line of JSON (no newline), and back. record_from_json throws Error
// naming `where` (file:line) for malformed JSON, a missing field or another version.
std::string record_to_json(const TuningRecord& record);
TuningRecord record_from_json(const std::string& line, const std::string& where);

// The current time as the records write it.
std::string utc_timestamp();

class Database {
 public:
  Database() = default;

  // Reads every record of a JSON Lines file (blank lines skipped). A missing file is an
  // empty database when `missing_ok`, else an Error naming it.
  static Database load(const std::string& path, bool missing_ok = false);

  // Adds a record; with a file attached (attach), also appends it there at once.
  void add(TuningRecord record);
  // Appends every later add() to `path` (created if missing).
  void attach(const std::string& path);

  const std::vector<TuningRecord>& records() const { return records_; }

  // The record a model runs for the workload on the target, if any: the fastest
  // successful re-measured record if there is one, else the fastest successful record.
  std::optional<TuningRecord> best(const std::string& workload_key, const Target& target) const;
  // Every record of the workload on the target, in file order.
  std::vector<TuningRecord> of_workload(const std::string& workload_key,
                                        const Target& target) const;
  // The workloads that have records, in order of first appearance.
  std::vector<std::string> workloads() const;

  // Writes every record to `path`, replacing it.
  void save(const std::string& path) const;

 private:
  std::vector<TuningRecord> records_;
  std::string attached_path_;
};

// True if `record` is to be chosen over `chosen` for their workload (Database::best's
// order): a re-measured record over a first timing, else the strictly faster one.
bool chosen_over(const TuningRecord& record, const TuningRecord& chosen);

// The records of several databases, without duplicates (same workload, target, trace and
// time), in the order met.
Database merge_databases(const std::vector<Database>& databases);

// The best record (as Database::best chooses) of every workload and target: a small
// database to ship with a model.
Database best_records(const Database& database);

}  // namespace minic::autotune
