// C++ scopes over perusetrace/annotate.h: a value is open for the lifetime of a scope object, so
// an exception or an early return cannot leave it open.
//
//   static const perusetrace::Attribute phase("mysolver", "phase");
//   { perusetrace::Scope s(phase, "exchange"); ... }
//   { perusetrace::Region r("assemble"); ... }
#ifndef PERUSETRACE_ANNOTATE_HPP
#define PERUSETRACE_ANNOTATE_HPP

#include <cstdint>

#include <perusetrace/annotate.h>

namespace perusetrace {

class Attribute {
 public:
  Attribute(const char* module, const char* name, int flags = PERUSETRACE_ATTR_DEFAULT)
      : id_(perusetrace_attribute(module, name, flags)) {}
  perusetrace_attribute_t id() const { return id_; }
  void set(const char* value) const { perusetrace_set(id_, value); }
  void set(std::int64_t value) const { perusetrace_set_int(id_, value); }

 private:
  perusetrace_attribute_t id_;
};

// begin at construction, end at destruction.
class Scope {
 public:
  Scope(const Attribute& attribute, const char* value) : id_(attribute.id()) {
    perusetrace_begin(id_, value);
  }
  Scope(const Attribute& attribute, std::int64_t value) : id_(attribute.id()) {
    perusetrace_begin_int(id_, value);
  }
  Scope(const Attribute& attribute, double value) : id_(attribute.id()) {
    perusetrace_begin_double(id_, value);
  }
  ~Scope() { perusetrace_end(id_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  perusetrace_attribute_t id_;
};

class Region {
 public:
  explicit Region(const char* name) : name_(name) { perusetrace_region_begin(name); }
  ~Region() { perusetrace_region_end(name_); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  const char* name_;
};

}  // namespace perusetrace

#endif
