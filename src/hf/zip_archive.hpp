#pragma once
// Reading a zip archive's entries through libzip (private to src/hf): pytorch_model.bin is one.
#include <zip.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace remat::hf::detail {

struct ZipCloser {
    void operator()(zip_t* z) const { zip_discard(z); }  // read-only: nothing to write back
};
struct ZipFileCloser {
    void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using Zip = std::unique_ptr<zip_t, ZipCloser>;
using ZipFile = std::unique_ptr<zip_file_t, ZipFileCloser>;

// libzip's message for an error code of zip_open.
std::string zip_message(int code);

// The size of entry `index`, once its claims are checked against an archive of `archive_bytes`: its
// compressed bytes must lie within the archive, an uncompressed (stored) entry hold exactly them, and a
// deflated one inflate no more than deflate can (~1032:1). FormatError "<where>: …" otherwise.
std::size_t checked_entry_size(zip_t* z, zip_uint64_t index, std::size_t archive_bytes, const std::string& where);
// An archive entry, read whole (libzip checks its CRC at the end), of exactly `size` bytes; throws
// FormatError "<where>: cannot read (…)" or "<where>: holds a different number of bytes …".
std::vector<std::byte> read_entry(zip_t* z, zip_uint64_t index, std::size_t size, const std::string& where);

}  // namespace remat::hf::detail
