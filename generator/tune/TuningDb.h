// TuningDb: the tuning database `tilegen tune` writes and `tilegen generate --tuning-db` reads
// (docs/tune.md). One JSON file (schemas/tilegen-tuning-db.schema.json):
//
//   {
//     "format": "tilegen-tuning-db",
//     "version": 1,
//     "entries": [
//       {"kernel": "softmax", "instance": "f32", "target": "c_avx512", "class": "large",
//        "spec_hash": "fnv1a64:0123456789abcdef", "config": {"BM": 2, "BN": 2048},
//        "shapes": ["M=4096 N=16384"]}
//     ]
//   }
//
// An entry is keyed by (kernel, instance, target, class) and holds the chosen configuration
// (every tile constant by name) for the spec whose body hashes to spec_hash (spec_hash()).
// Nothing measured is in it (times go to `tune --report`), so that two tune runs on one machine
// write the same file. The writer sorts entries by key and prints one fixed layout: the file is
// a pure function of its entries.
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tilegen::tune {

inline constexpr const char* kDbFormat = "tilegen-tuning-db";
inline constexpr int kDbVersion = 1;

struct TuningKey {
  std::string kernel, instance, target, cls;
  bool operator<(const TuningKey& o) const {
    return std::tie(kernel, instance, target, cls) <
           std::tie(o.kernel, o.instance, o.target, o.cls);
  }
  bool operator==(const TuningKey& o) const {
    return std::tie(kernel, instance, target, cls) ==
           std::tie(o.kernel, o.instance, o.target, o.cls);
  }
  std::string str() const; // "softmax/f32/c_avx512/large"
};

struct TuningEntry {
  TuningKey key;
  std::string spec_hash;                                // "fnv1a64:<16 hex digits>"
  std::vector<std::pair<std::string, int64_t>> config; // tile constant -> value, as written
  std::vector<std::string> shapes;                      // the shapes it was chosen at
  SourceLoc loc;                                        // the entry in the file (when read)
};

struct TuningDb {
  std::vector<TuningEntry> entries;
  const TuningEntry* find(const TuningKey& key) const;
};

// Reads and checks a database file. Located errors (through `diag`): not JSON/YAML, a missing
// or unknown "format", a "version" other than kDbVersion, a malformed entry, two entries with
// one key. nullopt after an error.
std::optional<TuningDb> read_tuning_db(const std::string& path, DiagEngine& diag);

// The file text: entries sorted by key, two-space indentation, one config per line, a final
// newline. Byte-identical for equal entry sets.
std::string write_tuning_db(const TuningDb& db);

// `db` with every entry of `tuned` replacing the entry of the same key (or added).
TuningDb merge_tuning_db(const TuningDb& db, const std::vector<TuningEntry>& tuned);

// The hash that ties an entry to the spec it was tuned for: FNV-1a (64 bit) of the kernel's
// canonical text, i.e. the type-bound kernel printed by ir::to_string (no source locations:
// name, type binding, params with their constraints, flags, scalars, tensors, tile constants
// with every per-target and per-class candidate list, `require`, grid, threads, the body) plus
// the schedule classes (predicates and pinned shapes) and the scalar requirements. Comments,
// whitespace, key order and the summary do not enter it; everything the generator reads does.
std::string spec_hash(const ir::Kernel& k);

// The entry's config as values in tile-constant order of `k`, or a reason it does not fit
// ("names 'BK', which the kernel does not have", "has no value for 'BN'").
std::optional<std::vector<int64_t>> config_values(const TuningEntry& e, const ir::Kernel& k,
                                                  std::string& why_not);

} // namespace tilegen::tune
