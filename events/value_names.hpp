// Names of constants and enumerators as a table of (value, name) pairs, where a switch would
// spell `case VALUE: return "name";` for each; at the bottom of the layers, so that every folder
// names its values the same way.
#pragma once

#include <initializer_list>

namespace perusetrace {

template <class T>
struct ValueName {
  T value;
  const char* name;
};

// The name `names` gives `value`, or `otherwise` when it lists no such value.
template <class T>
constexpr const char* name_in(T value, std::initializer_list<ValueName<T>> names,
                              const char* otherwise) {
  for (const ValueName<T>& n : names)
    if (n.value == value) return n.name;
  return otherwise;
}

}  // namespace perusetrace
