// DataCollatorForLanguageModeling's masking: which tokens are selected, what they become, how often,
// and that a key fixes the masks bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "remat/core/error.hpp"
#include "remat/data/masking.hpp"

using namespace remat;
using namespace remat::data;

namespace {

// A BERT-like layout: [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103.
constexpr std::int64_t pad = 0, unk = 100, cls = 101, sep = 102, mask = 103, vocab = 30522;
const MaskingRule rule{{pad, unk, cls, sep, mask}, mask, vocab, 0.15};

// (B, T) windows of [CLS] + ordinary ids + [SEP], the last rows padded at the end.
IdTensor batch(std::size_t B, std::size_t T) {
    IdTensor ids = IdTensor::from_shape({B, T});
    for (std::size_t b = 0; b < B; ++b) {
        const std::size_t used = b % 4 == 3 ? T / 2 : T;
        for (std::size_t t = 0; t < T; ++t) {
            std::int64_t id = 1000 + static_cast<std::int64_t>((b * 7919 + t * 104729) % 29000);
            if (t == 0) id = cls;
            if (t + 1 == used) id = sep;
            if (t >= used) id = pad;
            if (t == 5) id = unk;
            ids(b, t) = id;
        }
    }
    return ids;
}

bool is_special(std::int64_t id) { return id == pad || id == unk || id == cls || id == sep || id == mask; }

bool same(const IdTensor& a, const IdTensor& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(std::int64_t)) == 0;
}

std::string error_of(const IdTensor& ids, const MaskingRule& r) {
    try {
        (void)mask_tokens(ids, r, {});
    } catch (const ValueError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("masking: labels hold the originals exactly where selected; specials are never selected") {
    const IdTensor ids = batch(16, 64);
    const MaskedBatch m = mask_tokens(ids, rule, {1, 2, 3});
    REQUIRE(m.input_ids.shape() == ids.shape());
    REQUIRE(m.labels.shape() == ids.shape());
    std::size_t selected = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::int64_t id = ids.data()[i], in = m.input_ids.data()[i], label = m.labels.data()[i];
        if (is_special(id)) {
            CHECK(label == ignore_label);
            CHECK(in == id);
        } else if (label == ignore_label) {
            CHECK(in == id);  // unselected tokens are left alone
        } else {
            CHECK(label == id);
            CHECK(in >= 0);
            CHECK(in < vocab);
            ++selected;
        }
    }
    CHECK(selected > 0);
}

TEST_CASE("masking: selection 15 %, then 80 % [MASK], 10 % random, 10 % unchanged (within 5 sigma)") {
    // 512 x 512 = 262,144 positions, 5 sigma each: a correct implementation fails about once in 1.7
    // million runs per check; an off-by-a-percent one fails every time.
    const IdTensor ids = batch(512, 512);
    const MaskedBatch m = mask_tokens(ids, rule, {42, 7, 0});
    double candidates = 0, selected = 0, masked = 0, random = 0, kept = 0, random_sum = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::int64_t id = ids.data()[i], in = m.input_ids.data()[i];
        if (is_special(id)) continue;
        ++candidates;
        if (m.labels.data()[i] == ignore_label) continue;
        ++selected;
        if (in == mask) {
            ++masked;
        } else if (in == id) {
            ++kept;
        } else {
            ++random;
            random_sum += static_cast<double>(in);
        }
    }
    auto within = [](double count, double n, double p) {
        const double sigma = std::sqrt(n * p * (1 - p));
        CAPTURE(count);
        CAPTURE(n * p);
        CAPTURE(sigma);
        CHECK(std::abs(count - n * p) <= 5 * sigma);
    };
    const double V = vocab;
    within(selected, candidates, 0.15);
    within(masked, selected, 0.8 + 0.1 / V);           // a random id may be [MASK] itself
    within(kept, selected, 0.1 + 0.1 / V);             // ... or the original
    within(random, selected, 0.1 * (1 - 2 / V));
    // The random ids are uniform over the vocabulary: their mean is (V - 1) / 2 to 5 sigma.
    const double sigma_mean = V / std::sqrt(12.0 * random);
    CHECK(std::abs(random_sum / random - (V - 1) / 2) <= 5 * sigma_mean);
}

TEST_CASE("masking: a key fixes the masks bit for bit; another key gives others") {
    const IdTensor ids = batch(8, 128);
    const MaskedBatch a = mask_tokens(ids, rule, {5, 10, 1});
    const MaskedBatch again = mask_tokens(ids, rule, {5, 10, 1});
    CHECK(same(a.input_ids, again.input_ids));
    CHECK(same(a.labels, again.labels));
    for (const MaskingKey other : {MaskingKey{6, 10, 1}, MaskingKey{5, 11, 1}, MaskingKey{5, 10, 2}, MaskingKey{5, 1, 10}}) {
        CAPTURE(other.seed);
        CAPTURE(other.step);
        CAPTURE(other.micro_batch);
        const MaskedBatch b = mask_tokens(ids, rule, other);
        CHECK_FALSE(same(a.labels, b.labels));
        CHECK_FALSE(same(a.input_ids, b.input_ids));
    }
    // The masks come from the key's own generator: drawing from Generator(seed) does not move them.
    CHECK(masking_generator({5, 10, 1}).state() == masking_generator({5, 10, 1}).state());
    CHECK(masking_generator({5, 10, 1}).state().offset == 0);
}

TEST_CASE("masking: probabilities 0 and 1") {
    const IdTensor ids = batch(4, 32);
    MaskingRule none = rule, all = rule;
    none.mlm_probability = 0;
    all.mlm_probability = 1;
    const MaskedBatch n = mask_tokens(ids, none, {});
    CHECK(same(n.input_ids, ids));
    for (std::size_t i = 0; i < ids.size(); ++i) CHECK(n.labels.data()[i] == ignore_label);
    const MaskedBatch a = mask_tokens(ids, all, {});
    for (std::size_t i = 0; i < ids.size(); ++i)
        CHECK(a.labels.data()[i] == (is_special(ids.data()[i]) ? ignore_label : ids.data()[i]));
}

TEST_CASE("masking: bad batches and rules are errors") {
    const IdTensor ids = batch(2, 8);
    CHECK(error_of(IdTensor::from_shape({0, 8}), rule) == "mask_tokens: empty batch (0, 8)");
    CHECK(error_of(IdTensor::from_shape({8}), rule) == "mask_tokens: input_ids must be (B, T), got (8,)");
    IdTensor bad = ids;
    bad(1, 3) = vocab;
    CHECK(error_of(bad, rule) == "mask_tokens: token id 30522 at (1, 3) is outside the vocabulary [0, 30522)");
    MaskingRule r = rule;
    r.mask_id = vocab;
    CHECK(error_of(ids, r) == "mask_tokens: mask_id 30522 is outside the vocabulary [0, 30522)");
    r = rule;
    r.mlm_probability = 1.5;
    CHECK(error_of(ids, r).find("mask_tokens: mlm_probability must be in [0, 1], got 1.5") == 0);
}

TEST_CASE("masking: BERT's window is [CLS] + run + [SEP]") {
    const std::vector<std::int64_t> run = {7, 8, 9};
    CHECK(bert_window(run, cls, sep) == std::vector<std::int64_t>{cls, 7, 8, 9, sep});
    CHECK(bert_window({}, cls, sep) == std::vector<std::int64_t>{cls, sep});
}
