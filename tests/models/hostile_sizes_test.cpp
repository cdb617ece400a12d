// Sizes from a config.json are checked before anything is allocated for them: every size field is
// bounded, and building a model is bounded by what its checkpoint holds (models/build_limit.hpp).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "models/architecture.hpp"
#include "models/gpt2/config.hpp"
#include "remat/core/memory.hpp"
#include "tests/support/fixture_with_field.hpp"

using namespace remat;
namespace fs = std::filesystem;

using remat::test::read_text;

namespace {

using test::fixtures;

std::string load_error(const fs::path& dir) {
    const models::Architecture& arch = models::find_for_config(read_text(dir / "config.json"), "config.json");
    try {
        (void)models::load(arch, dir, Policy::none());
    } catch (const Error& e) {
        return e.what();
    }
    return "loaded";
}

}  // namespace

TEST_CASE("every size field of a config is bounded, the field named") {
    const test::TempDir tmp("remat-sizes");
    const std::string big = std::to_string(std::size_t{1} << 62);
    const fs::path vocab = test::fixture_with_field(tmp, "gpt2-tiny", "vocab_size", big);
    CHECK(load_error(vocab) == (vocab / "config.json").string() + ": GPT-2 config: vocab_size = " + big + " is over the limit of 16777216");
    // BERT's pad row was zeroed at pad_token_id * hidden_size of a vocabulary whose byte count had wrapped to 0.
    const fs::path bert = test::fixture_with_field(tmp, "bert-tiny", "vocab_size", big);
    CHECK(load_error(bert) == (bert / "config.json").string() + ": BERT config: vocab_size = " + big + " is over the limit of 16777216");
    const fs::path embd = test::fixture_with_field(tmp, "gpt2-tiny", "n_embd", std::to_string(std::size_t{1} << 40));
    CHECK(load_error(embd).ends_with("n_embd = 1099511627776 is over the limit of 16777216"));
    // Larger than any integer nlohmann reads as unsigned: a number, but not a size.
    CHECK(load_error(test::fixture_with_field(tmp, "gpt2-tiny", "n_layer", "18446744073709551616")).ends_with("n_layer must be a non-negative integer, got 1.8446744073709552e+19"));
    CHECK(load_error(test::fixture_with_field(tmp, "gpt2-tiny", "n_head", "-2")).ends_with("n_head must be a non-negative integer, got -2"));
    // The bound is the same when a Config is made in code.
    gpt2::Config c;
    c.n_positions = (std::size_t{1} << 24) + 1;
    CHECK_THROWS_WITH_AS(c.validate(), "GPT-2 config: n_positions = 16777217 is over the limit of 16777216", ValueError);
    // Zero layers is a valid model (embeddings and the head).
    CHECK(load_error(test::fixture_with_field(tmp, "gpt2-tiny", "n_layer", "0")) == "loaded");
}

TEST_CASE("a config the checkpoint cannot fill is refused before it is built, within the checkpoint's size") {
    const test::TempDir tmp("remat-sizes");
    // 100000 layers over a 2-layer checkpoint: 1.3 GB before the check existed, and an 80-MB message.
    const fs::path layers = test::fixture_with_field(tmp, "gpt2-tiny", "n_layer", "100000");
    const std::size_t before = memory::live_bytes();
    const memory::PeakScope peak;
    const std::string error = load_error(layers);
    CHECK(error.starts_with((layers / "config.json").string() + ": describes a model larger than " +
                            (layers / "model.safetensors").string() + " holds (building it passed 16.0 MiB; its 30 tensors take"));
    CHECK(error.ends_with("as float32): check n_layer 100000, n_embd 16, n_head 2, vocab_size 64, n_positions 16"));
    CHECK(peak.peak_above_baseline() <= (std::size_t{17} << 20));  // the limit, not gigabytes
    CHECK(memory::live_bytes() == before);                          // what was built is freed
    // The library's typed from_pretrained: tests/models/configured_test.cpp.

    // More layers than the checkpoint, but within what it could justify: a load error naming the
    // first ten missing tensors and counting the rest.
    const std::string listed = load_error(test::fixture_with_field(tmp, "gpt2-tiny", "n_layer", "40"));
    CHECK(listed.find("456 of 484 tensors cannot be loaded:\n  missing transformer.h.2.ln_1.weight") != std::string::npos);
    CHECK(listed.ends_with("\n  and 446 more"));
    CHECK(listed.size() < 1000);
}

TEST_CASE("AllocationLimit: this thread's growth, frees give room back, scopes nest, other threads unaffected") {
    const std::size_t mib = std::size_t{1} << 20;
    {
        memory::AllocationLimit limit(3 * mib);
        Tensor a = zeros({256, 1024});  // 1 MiB
        {
            Tensor b = zeros({512, 1024});  // 2 MiB: 3 in all
            CHECK(limit.used() == 3 * mib);
            CHECK_THROWS_AS(zeros({1}), memory::OverLimit);
        }
        Tensor c = zeros({512, 1024});  // b's room again
        CHECK_THROWS_AS(zeros({256, 1024}), memory::OverLimit);
        std::thread other([] { Tensor big = zeros({4096, 1024}); });  // 16 MiB on another thread
        other.join();
        {
            memory::AllocationLimit inner(mib);
            CHECK_THROWS_AS(zeros({256, 1025}), memory::OverLimit);  // inner's limit applies
            try {
                (void)zeros({1024, 1024});
            } catch (const memory::OverLimit& e) {
                CHECK(e.requested() == 4 * mib);
                CHECK(e.limit() == mib);
            }
        }
        CHECK(limit.used() == 3 * mib);
    }
    Tensor free_again = zeros({4096, 1024});  // no limit outside the scope
    CHECK(free_again.size() == 4096u * 1024u);
}
