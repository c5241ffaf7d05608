// File: sim/callback.h
//
// EventCallback: a move-only `void()` callable with small-buffer storage, the
// engine's replacement for std::function. Callables of up to kInlineBytes
// (five pointers' worth of captures) that are nothrow-move-constructible live
// inside the object, so scheduling the common event allocates nothing; larger
// ones are moved to the heap once. std::function would also need the callable
// to be copyable, and its inline buffer is 16 bytes in libstdc++.

#ifndef ZIONSIM_SIM_CALLBACK_H_
#define ZIONSIM_SIM_CALLBACK_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace zx::sim {

class EventCallback {
 public:
  /// Bytes of captures stored without a heap allocation.
  static constexpr std::size_t kInlineBytes = 40;
  /// Alignment of the inline buffer: pointers and 64-bit integers. Together
  /// with the ops pointer an EventCallback is 48 bytes, so an engine slot
  /// (callback, label, generation, link) is one 64-byte cache line.
  static constexpr std::size_t kInlineAlign = alignof(std::uint64_t);

  EventCallback() = default;

  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, EventCallback> &&
             std::is_invocable_r_v<void, std::remove_cvref_t<F>&>)
  EventCallback(F&& f) {  // NOLINT(google-explicit-constructor): lambdas convert implicitly
    using Fn = std::remove_cvref_t<F>;
    if constexpr (fits_inline<Fn>()) {
      ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
      ops_ = &kInlineOps<Fn>;
    } else {
      Fn* heap = new Fn(std::forward<F>(f));
      std::memcpy(storage_, &heap, sizeof heap);
      ops_ = &kHeapOps<Fn>;
    }
  }

  EventCallback(EventCallback&& other) noexcept { take(other); }
  EventCallback& operator=(EventCallback&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  EventCallback(const EventCallback&) = delete;
  EventCallback& operator=(const EventCallback&) = delete;
  ~EventCallback() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }

  /// Calls the callable; requires a non-empty callback.
  void operator()() { ops_->invoke(storage_); }

  /// Destroys the callable and leaves the callback empty.
  void reset() noexcept {
    if (ops_ != nullptr) {
      if (ops_->destroy != nullptr) ops_->destroy(storage_);
      ops_ = nullptr;
    }
  }

  /// True when the callable lives in the inline buffer (for tests).
  bool is_inline() const { return ops_ != nullptr && ops_->inline_storage; }

 private:
  struct Ops {
    void (*invoke)(void* storage);
    /// Move-constructs into `dst` from `src` and destroys `src`; null means
    /// a byte copy is a valid relocation.
    void (*relocate)(void* dst, void* src) noexcept;
    /// Null means trivially destructible.
    void (*destroy)(void* storage) noexcept;
    bool inline_storage;
  };

  template <typename Fn>
  static constexpr bool fits_inline() {
    return sizeof(Fn) <= kInlineBytes && alignof(Fn) <= kInlineAlign &&
           std::is_nothrow_move_constructible_v<Fn>;
  }

  template <typename Fn>
  static constexpr Ops kInlineOps = {
      [](void* s) { (*std::launder(static_cast<Fn*>(s)))(); },
      std::is_trivially_copyable_v<Fn>
          ? nullptr
          : +[](void* dst, void* src) noexcept {
              Fn* from = std::launder(static_cast<Fn*>(src));
              ::new (dst) Fn(std::move(*from));
              from->~Fn();
            },
      std::is_trivially_destructible_v<Fn>
          ? nullptr
          : +[](void* s) noexcept { std::launder(static_cast<Fn*>(s))->~Fn(); },
      true};

  template <typename Fn>
  static Fn* heap_pointer(void* s) {
    Fn* p = nullptr;
    std::memcpy(&p, s, sizeof p);
    return p;
  }

  template <typename Fn>
  static constexpr Ops kHeapOps = {[](void* s) { (*heap_pointer<Fn>(s))(); },
                                   nullptr,  // the pointer relocates by copy
                                   +[](void* s) noexcept { delete heap_pointer<Fn>(s); }, false};

  void take(EventCallback& other) noexcept {
    ops_ = other.ops_;
    if (ops_ == nullptr) return;
    if (ops_->relocate != nullptr) {
      ops_->relocate(storage_, other.storage_);
    } else {
      std::memcpy(storage_, other.storage_, kInlineBytes);
    }
    other.ops_ = nullptr;
  }

  alignas(kInlineAlign) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace zx::sim

#endif  // ZIONSIM_SIM_CALLBACK_H_
