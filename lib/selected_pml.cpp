#include "lib/selected_pml.hpp"

#include <dlfcn.h>

#include <cstring>

namespace perusetrace::peruse {

namespace {

// The head of Open MPI's mca_base_component_2_1_0_t (opal/mca/mca.h), the same in 4.1 and 5.0:
// the selected PML component's version block begins with it. Read only after its type name
// says "pml", so another layout is recognised as unknown, never misread.
struct ComponentHead {
  int mca_major, mca_minor, mca_release;
  char project[16];
  int project_major, project_minor, project_release;
  char type[32];
  int type_major, type_minor, type_release;
  char component[64];
};

}  // namespace

std::string selected_pml() {
  const void* symbol = ::dlsym(RTLD_DEFAULT, "mca_pml_base_selected_component");
  if (symbol == nullptr) return "";
  ComponentHead head;
  std::memcpy(&head, symbol, sizeof head);
  if (std::strncmp(head.type, "pml", sizeof head.type) != 0 ||
      std::memchr(head.component, '\0', sizeof head.component) == nullptr)
    return "";
  return head.component;
}

}  // namespace perusetrace::peruse
