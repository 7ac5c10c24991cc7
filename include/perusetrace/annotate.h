/* Context annotations: the program and its libraries say what they are doing (phase=solve,
 * iteration=42), and perusetrace records it next to every MPI call, Peruse event, MPI_T value and
 * sample of the thread, so each analysis can be told per context (`perusetrace report --by`).
 *
 *   static perusetrace_attribute_t phase;
 *   phase = perusetrace_attribute("mysolver", "phase", PERUSETRACE_ATTR_DEFAULT);
 *   perusetrace_begin(phase, "exchange");   ...   perusetrace_end(phase);
 *   perusetrace_set_int(iteration, 3);      // replaces the previous value
 *   perusetrace_region_begin("assemble");   ...   perusetrace_region_end("assemble");
 *
 * The library's functions are declared weak: a program that uses this header builds, links and
 * runs without perusetrace (every call is then a test of a null pointer), and is traced when the
 * tracer is preloaded or linked (a position-independent executable, the default of today's
 * compilers, resolves them at load time). Calls before MPI_Init, after MPI_Finalize or while
 * tracing is off are recorded nowhere and cost little; an `end` that does not match the open
 * `begin`s is reported once on stderr and repaired, so the trace stays well nested.
 * docs/annotations.md has the design. */
#ifndef PERUSETRACE_ANNOTATE_H
#define PERUSETRACE_ANNOTATE_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An attribute: created once, used from any thread. 0 when perusetrace is absent, which every
 * function takes and ignores. */
typedef uint32_t perusetrace_attribute_t;

enum perusetrace_attribute_flags {
  PERUSETRACE_ATTR_DEFAULT = 0,
  /* Scope: a value belongs to the thread that set it (the default), or to the whole process. */
  PERUSETRACE_ATTR_THREAD_SCOPE = 0,
  PERUSETRACE_ATTR_PROCESS_SCOPE = 1,
  /* Values nest (begin/end, the default), or a begin replaces the attribute's value when it is
   * the innermost open one, as set does. */
  PERUSETRACE_ATTR_NESTED = 0,
  PERUSETRACE_ATTR_AS_VALUE = 2
};

#if defined(PERUSETRACE_BUILDING_LIBRARY) || !defined(__GNUC__)
#define PERUSETRACE_WEAK
#else
#define PERUSETRACE_WEAK __attribute__((weak))
#endif

/* The library's entry points; programs call the inline functions below. `module` keeps two
 * libraries' attributes apart ("" or NULL: the program's own); the same module and name give the
 * same attribute, whatever the flags of later calls. */
perusetrace_attribute_t perusetrace_annotate_attribute(const char* module, const char* name,
                                                       int flags) PERUSETRACE_WEAK;
void perusetrace_annotate_begin(perusetrace_attribute_t attribute,
                                const char* value) PERUSETRACE_WEAK;
void perusetrace_annotate_end(perusetrace_attribute_t attribute) PERUSETRACE_WEAK;
void perusetrace_annotate_set(perusetrace_attribute_t attribute,
                              const char* value) PERUSETRACE_WEAK;
void perusetrace_annotate_set_int(perusetrace_attribute_t attribute,
                                  int64_t value) PERUSETRACE_WEAK;
void perusetrace_annotate_region_begin(const char* name) PERUSETRACE_WEAK;
void perusetrace_annotate_region_end(const char* name) PERUSETRACE_WEAK;

/* The library itself defines the entry points, so it has no use for the wrappers. */
#ifndef PERUSETRACE_BUILDING_LIBRARY

static inline perusetrace_attribute_t perusetrace_attribute(const char* module, const char* name,
                                                            int flags) {
  return perusetrace_annotate_attribute ? perusetrace_annotate_attribute(module, name, flags) : 0;
}

/* Opens `value` of a nested attribute, closed by perusetrace_end(attribute). */
static inline void perusetrace_begin(perusetrace_attribute_t attribute, const char* value) {
  if (perusetrace_annotate_begin) perusetrace_annotate_begin(attribute, value);
}
static inline void perusetrace_begin_int(perusetrace_attribute_t attribute, int64_t value) {
  char text[24];
  if (!perusetrace_annotate_begin) return;
  snprintf(text, sizeof text, "%lld", (long long)value);
  perusetrace_annotate_begin(attribute, text);
}
static inline void perusetrace_begin_double(perusetrace_attribute_t attribute, double value) {
  char text[32];
  if (!perusetrace_annotate_begin) return;
  snprintf(text, sizeof text, "%g", value);
  perusetrace_annotate_begin(attribute, text);
}

/* Closes the innermost open value of `attribute`. */
static inline void perusetrace_end(perusetrace_attribute_t attribute) {
  if (perusetrace_annotate_end) perusetrace_annotate_end(attribute);
}

/* Replaces the attribute's value: a string value as a region (the previous one ends), an
 * integer as a metric (an OTF2 metric member named after the attribute). */
static inline void perusetrace_set(perusetrace_attribute_t attribute, const char* value) {
  if (perusetrace_annotate_set) perusetrace_annotate_set(attribute, value);
}
static inline void perusetrace_set_int(perusetrace_attribute_t attribute, int64_t value) {
  if (perusetrace_annotate_set_int) perusetrace_annotate_set_int(attribute, value);
}

/* A named code region: the built-in nested attribute "region". Ending another name than the
 * innermost open one is reported and repaired like any mismatched end. */
static inline void perusetrace_region_begin(const char* name) {
  if (perusetrace_annotate_region_begin) perusetrace_annotate_region_begin(name);
}
static inline void perusetrace_region_end(const char* name) {
  if (perusetrace_annotate_region_end) perusetrace_annotate_region_end(name);
}

#endif /* PERUSETRACE_BUILDING_LIBRARY */

#ifdef __cplusplus
}
#endif

#endif
