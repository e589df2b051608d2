// "Do the real allocation", type-erased: the slow paths hand the hook's real
// call down to the code that decides when it runs (a realloc of a recorded
// block runs it inside its commit: event_path.h).
#pragma once

namespace memloupe::recorder {

class RealCall {
 public:
  template <class F>
  explicit RealCall(F& f) noexcept
      : ctx_(&f), fn_([](void* c) -> void* { return (*static_cast<F*>(c))(); }) {}
  void* operator()() const noexcept { return fn_(ctx_); }

 private:
  void* ctx_;
  void* (*fn_)(void*);
};

}  // namespace memloupe::recorder
