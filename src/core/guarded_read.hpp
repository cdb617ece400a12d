#pragma once
// Reading a memory-mapped file that may shrink underneath: a file truncated while mapped (a new model
// copied over the old one while remat loads it) makes the next read of a page past its new end raise
// SIGBUS, which kills the process. guarded_read turns that into a `false` the reader reports as an
// error naming the file.
#include <cstddef>
#include <filesystem>
#include <type_traits>
#include <utility>

namespace remat::detail {

// Calls read(context), during which a SIGBUS at an address in [begin, begin + size) abandons the call
// (siglongjmp) and makes guarded_read return false; true when read() returned normally. Other signals,
// and SIGBUS elsewhere, keep their usual effect. read() must hold nothing that needs destroying (no
// owning objects of its own): it may be left half-way. Thread-safe; reentrant per thread.
bool guarded_read(const void* begin, std::size_t size, void (*read)(void* context), void* context);

// FormatError "<path>: the file shrank while it was being read (<n> bytes when opened, now <m> bytes):
// was it overwritten in place?" — what a reader throws when guarded_read returned false.
[[noreturn]] void throw_shrank(const std::filesystem::path& path, std::size_t size_when_opened);

// The same with a callable: guarded_read(p, n, [&] { std::memcpy(out, p, n); }).
template <class Read>
bool guarded_read(const void* begin, std::size_t size, Read&& read) {
    return guarded_read(begin, size, [](void* r) { (*static_cast<std::remove_reference_t<Read>*>(r))(); },
                        static_cast<void*>(&read));
}

}  // namespace remat::detail
