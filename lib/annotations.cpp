#include "lib/annotations.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <unordered_map>

#define PERUSETRACE_BUILDING_LIBRARY
#include "include/perusetrace/annotate.h"
#include "lib/journal.hpp"
#include "lib/metric_ids.hpp"
#include "lib/thread_buffer.hpp"
#include "record/archive_schema.hpp"

namespace perusetrace::annotate {

namespace {

// Attribute ids index fixed arrays, so the hot path reads an attribute without a lock.
constexpr std::uint32_t kMaxAttributes = 4096;
constexpr std::uint32_t kNoMetric = 0xffffffffu;
constexpr std::uint32_t kNotRecorded = 0xffffffffu;

struct Attribute {
  std::string name;  // "MODULE:NAME", or "NAME" for the program's own
  int flags = 0;
  bool noted = false;  // a process-scope attribute's journal line is written
};

// Everything here is written under `mutex`, off the hot path: an attribute's creation, a value's
// first use, an integer attribute's first value.
struct Registry {
  std::mutex mutex;
  std::deque<Attribute> attributes;  // id - 1
  std::unordered_map<std::string, std::uint32_t> attribute_ids;
  std::deque<std::string> values;  // the value part of each pair, by local id: cached by pointer
  std::vector<std::string> pairs;  // "ATTRIBUTE=VALUE" by local id
  std::unordered_map<std::string, std::uint32_t> pair_ids;  // attribute id, '\0', value
  std::vector<trace::MetricInfo> metrics;
  std::atomic<std::uint32_t> metric_of[kMaxAttributes + 1];
  std::atomic<int> flags_of[kMaxAttributes + 1];  // set before the attribute's id is handed out
  std::atomic<std::uint32_t> count{0};            // attributes created: ids 1..count are valid
  std::atomic<bool> mismatch_reported{false}, full_reported{false};
  Registry() {
    for (auto& m : metric_of) m.store(kNoMetric, std::memory_order_relaxed);
    for (auto& f : flags_of) f.store(0, std::memory_order_relaxed);
  }
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may annotate during exit
  return *r;
}

// A thread's open values, innermost last, and its cache of interned pairs.
constexpr std::uint32_t kMaxDepth = 64;
constexpr std::uint32_t kCacheSlots = 64;
struct Open {
  std::uint32_t attribute;
  std::uint32_t pair;  // kNotRecorded: begun while tracing was off, so no record to close
  const char* value;   // the interned value (Registry::values); nullptr when not recorded
};
struct CacheSlot {
  std::uint32_t attribute = 0;
  std::uint32_t pair = 0;
  std::uint64_t key = 0;        // the value's hash, or the caller's pointer to it
  const char* value = nullptr;  // the interned value (Registry::values)
};
struct ThreadAnnotations {
  Open open[kMaxDepth];
  std::uint32_t depth = 0;
  std::uint32_t beyond = 0;  // begins past kMaxDepth, neither recorded nor kept
  // Two caches: by the caller's pointer (a string literal is at one address: no hashing), then
  // by the value's hash (a buffer reused for other values). Both compare the strings.
  CacheSlot by_pointer[kCacheSlots];
  CacheSlot by_content[kCacheSlots];
};

// A pointer, not the state itself: the initial-exec TLS block of a library stays small. The
// state is allocated at a thread's first annotation and lives as long as the process.
constinit thread_local ThreadAnnotations* t_annotations __attribute__((tls_model("initial-exec"))) =
    nullptr;

ThreadAnnotations* thread_state() noexcept {
  if (t_annotations == nullptr) [[unlikely]]
    t_annotations = new (std::nothrow) ThreadAnnotations;
  return t_annotations;
}

std::uint64_t hash_of(const char* s) noexcept {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (; *s != '\0'; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
  return h;
}

bool tracing() noexcept {
  return g_state.load(std::memory_order_relaxed) == TraceState::On;
}

const std::string& attribute_name(std::uint32_t id) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  static const std::string unknown = "?";
  return id >= 1 && id <= r.attributes.size() ? r.attributes[id - 1].name : unknown;
}

std::string pair_name(const Open& o) {
  if (o.pair == kNotRecorded) return attribute_name(o.attribute);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return o.pair < r.pairs.size() ? r.pairs[o.pair] : std::string("?");
}

// The pair's local id, interned at its first use on this process.
bool hit(const CacheSlot& slot, std::uint32_t attribute, std::uint64_t key, const char* value) {
  return slot.value != nullptr && slot.attribute == attribute && slot.key == key &&
         std::strcmp(slot.value, value) == 0;
}

// `interned` gets the value's interned copy, which lives as long as the process.
std::uint32_t intern(ThreadAnnotations& t, std::uint32_t attribute, const char* value,
                     const char*& interned) {
  constexpr std::uint64_t kMix = 0x9e3779b97f4a7c15ull;
  const auto address = reinterpret_cast<std::uintptr_t>(value);
  CacheSlot& by_pointer = t.by_pointer[((address >> 3) ^ attribute * kMix) % kCacheSlots];
  if (hit(by_pointer, attribute, address, value)) {
    interned = by_pointer.value;
    return by_pointer.pair;
  }
  const std::uint64_t hash = hash_of(value) ^ (attribute * kMix);
  CacheSlot& slot = t.by_content[hash % kCacheSlots];
  if (hit(slot, attribute, hash, value)) {
    by_pointer = CacheSlot{attribute, slot.pair, address, slot.value};
    interned = slot.value;
    return slot.pair;
  }
  Registry& r = registry();
  std::string key = std::to_string(attribute);
  key += '\0';
  key += value;
  std::lock_guard lock(r.mutex);
  auto [it, fresh] = r.pair_ids.try_emplace(key, static_cast<std::uint32_t>(r.pairs.size()));
  if (fresh) {
    Attribute& a = r.attributes[attribute - 1];
    if ((a.flags & PERUSETRACE_ATTR_PROCESS_SCOPE) != 0 && !a.noted) {
      journal::note_process_attribute(a.name);
      a.noted = true;
    }
    std::string pair = a.name;
    pair += trace::kAnnotationSeparator;
    pair += value;
    for (char& c : pair)  // one line per fact in the journal
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    journal::note_annotation(it->second, pair);
    r.pairs.push_back(std::move(pair));
    r.values.emplace_back(value);
  }
  slot = CacheSlot{attribute, it->second, hash, r.values[it->second].c_str()};
  by_pointer = CacheSlot{attribute, it->second, address, slot.value};
  interned = slot.value;
  return it->second;
}

void emit_annotation(RecordKind kind, std::uint32_t pair, std::uint32_t attribute) noexcept {
  end_fold();  // an annotation's region does not nest in the polls before it
  emit(Record{0, kind, 0, 0, pair, 0, static_cast<std::int32_t>(attribute), 0, 0, 0});
}

void report_mismatch(const std::string& ended, const std::string& open) {
  if (registry().mismatch_reported.exchange(true)) return;
  if (open.empty())
    std::fprintf(stderr,
                 "perusetrace: annotation end of %s, which has no open begin on this thread: "
                 "ignored (later mismatches are repaired without a word).\n",
                 ended.c_str());
  else
    std::fprintf(stderr,
                 "perusetrace: annotation end of %s while %s is the innermost open value: %s is "
                 "ended first, so the trace stays nested (later mismatches are repaired without "
                 "a word).\n",
                 ended.c_str(), open.c_str(), open.c_str());
}

bool valid(std::uint32_t attribute) noexcept {
  return attribute >= 1 && attribute <= registry().count.load(std::memory_order_acquire);
}

void close_innermost(ThreadAnnotations& t) noexcept {
  const Open o = t.open[--t.depth];
  if (o.pair != kNotRecorded) emit_annotation(RecordKind::AnnotationEnd, o.pair, o.attribute);
}

void begin(std::uint32_t attribute, const char* value) noexcept {
  ThreadAnnotations* t = thread_state();
  if (t == nullptr || !valid(attribute)) return;
  // An as-value attribute's values replace each other: its innermost value ends first.
  if ((registry().flags_of[attribute].load(std::memory_order_relaxed) &
       PERUSETRACE_ATTR_AS_VALUE) != 0 &&
      t->beyond == 0 && t->depth > 0 && t->open[t->depth - 1].attribute == attribute)
    close_innermost(*t);
  if (t->depth == kMaxDepth) {
    ++t->beyond;
    return;
  }
  std::uint32_t pair = kNotRecorded;
  const char* interned = nullptr;
  if (tracing()) {
    try {
      pair = intern(*t, attribute, value != nullptr ? value : "", interned);
    } catch (...) {  // out of memory: this value goes unrecorded
    }
  }
  t->open[t->depth++] = Open{attribute, pair, pair != kNotRecorded ? interned : nullptr};
  if (pair != kNotRecorded) emit_annotation(RecordKind::AnnotationBegin, pair, attribute);
}

// `value`: the one expected to be ended, or nullptr for any.
void end(std::uint32_t attribute, const char* value) noexcept {
  ThreadAnnotations* t = thread_state();
  if (t == nullptr || !valid(attribute)) return;
  if (t->beyond > 0) {
    --t->beyond;
    return;
  }
  std::uint32_t i = t->depth;
  while (i > 0 && t->open[i - 1].attribute != attribute) --i;
  try {
    if (i == 0) {
      std::string ended = attribute_name(attribute);
      if (value != nullptr) ended += trace::kAnnotationSeparator + std::string(value);
      report_mismatch(ended, "");
      return;
    }
    const Open& found = t->open[i - 1];
    // By the interned copy: no lock on the way of a matching end.
    const bool other_value =
        value != nullptr && found.value != nullptr && std::strcmp(found.value, value) != 0;
    if (i != t->depth || other_value) {
      std::string ended = attribute_name(attribute);
      if (value != nullptr) ended += trace::kAnnotationSeparator + std::string(value);
      report_mismatch(ended, pair_name(t->open[t->depth - 1]));
    }
  } catch (...) {  // out of memory while wording the report: the repair below still happens
  }
  while (t->depth >= i) close_innermost(*t);
}

}  // namespace

std::vector<std::string> recorded_annotations() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.pairs;
}

std::vector<std::string> process_attributes() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const Attribute& a : r.attributes)
    if ((a.flags & PERUSETRACE_ATTR_PROCESS_SCOPE) != 0) names.push_back(a.name);
  return names;
}

std::vector<trace::MetricInfo> recorded_metrics() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.metrics;
}

}  // namespace perusetrace::annotate

using namespace perusetrace;
using namespace perusetrace::annotate;

#define PERUSETRACE_API extern "C" __attribute__((visibility("default")))

PERUSETRACE_API perusetrace_attribute_t perusetrace_annotate_attribute(const char* module,
                                                                       const char* name,
                                                                       int flags) {
  if (name == nullptr || *name == '\0') return 0;
  try {
    std::string full = module != nullptr && *module != '\0' ? std::string(module) + ':' : "";
    full += name;
    for (char& c : full)  // '=' ends the attribute in a region's name
      if (c == trace::kAnnotationSeparator || c == '\n' || c == '\t') c = '_';
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto [it, fresh] =
        r.attribute_ids.try_emplace(full, static_cast<std::uint32_t>(r.attributes.size() + 1));
    if (!fresh) return it->second;
    if (it->second > kMaxAttributes) {
      r.attribute_ids.erase(it);
      if (!r.full_reported.exchange(true))
        std::fprintf(stderr,
                     "perusetrace: more than %u annotation attributes: %s and later ones "
                     "are not recorded.\n",
                     kMaxAttributes, full.c_str());
      return 0;
    }
    r.attributes.push_back(Attribute{full, flags});
    r.flags_of[it->second].store(flags, std::memory_order_relaxed);
    r.count.store(it->second, std::memory_order_release);
    return it->second;
  } catch (...) {
    return 0;
  }
}

PERUSETRACE_API void perusetrace_annotate_begin(perusetrace_attribute_t attribute,
                                                const char* value) {
  begin(attribute, value);
}

PERUSETRACE_API void perusetrace_annotate_end(perusetrace_attribute_t attribute) {
  end(attribute, nullptr);
}

PERUSETRACE_API void perusetrace_annotate_set(perusetrace_attribute_t attribute,
                                              const char* value) {
  ThreadAnnotations* t = thread_state();
  if (t == nullptr || !valid(attribute)) return;
  // The attribute's value in force is replaced: it ends only when it is the innermost one, as
  // ending an outer one would end what was begun inside it.
  if (t->beyond == 0 && t->depth > 0 && t->open[t->depth - 1].attribute == attribute)
    close_innermost(*t);
  begin(attribute, value);
}

PERUSETRACE_API void perusetrace_annotate_set_int(perusetrace_attribute_t attribute,
                                                  int64_t value) {
  if (!valid(attribute) || !tracing()) return;
  Registry& r = registry();
  std::uint32_t metric = r.metric_of[attribute].load(std::memory_order_acquire);
  if (metric == kNoMetric) [[unlikely]] {
    try {
      std::lock_guard lock(r.mutex);
      metric = r.metric_of[attribute].load(std::memory_order_relaxed);
      if (metric == kNoMetric) {
        trace::MetricInfo m;
        m.local_id = next_metric_id();
        m.name = r.attributes[attribute - 1].name;
        m.description = (r.attributes[attribute - 1].flags & PERUSETRACE_ATTR_PROCESS_SCOPE) != 0
                            ? trace::kProcessAnnotationDescription
                            : trace::kAnnotationDescription;
        m.annotation = true;
        journal::note_metric(m);
        r.metrics.push_back(m);
        metric = m.local_id;
        r.metric_of[attribute].store(metric, std::memory_order_release);
      }
    } catch (...) {
      return;
    }
  }
  end_fold();
  emit(Record{0, RecordKind::AnnotationSet, 0, 0, metric, 0, 0, static_cast<std::uint64_t>(value),
              0, 0});
}

PERUSETRACE_API void perusetrace_annotate_region_begin(const char* name) {
  static const perusetrace_attribute_t region = perusetrace_annotate_attribute("", "region", 0);
  begin(region, name);
}

PERUSETRACE_API void perusetrace_annotate_region_end(const char* name) {
  static const perusetrace_attribute_t region = perusetrace_annotate_attribute("", "region", 0);
  end(region, name);
}
