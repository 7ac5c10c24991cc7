// What an OTF2 reader callback does with an exception: OTF2 is C and must not see one.
#pragma once

#include <otf2/otf2.h>

#include <exception>
#include <utility>

namespace perusetrace::archive {

// Runs a callback's body on the reader's state (the callback's user data, a `State` with an
// std::exception_ptr `failure`). An exception becomes OTF2_CALLBACK_INTERRUPT and is kept,
// the first one only, in `failure` for the caller to rethrow once OTF2 has returned.
template <class State, class Body>
OTF2_CallbackCode guarded_callback(void* data, Body&& body) {
  State& s = *static_cast<State*>(data);
  try {
    std::forward<Body>(body)(s);
    return OTF2_CALLBACK_SUCCESS;
  } catch (...) {
    if (!s.failure) s.failure = std::current_exception();
    return OTF2_CALLBACK_INTERRUPT;
  }
}

}  // namespace perusetrace::archive
