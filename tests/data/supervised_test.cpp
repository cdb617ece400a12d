// Supervised fine-tuning examples from JSONL: the three formats tokenised as HF does, labels on the
// answers only (checked by decoding the labelled tokens), cutting, and one error naming the file and
// line for each bad line.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "remat/data/supervised.hpp"
#include "remat/text/hf_tokenizer.hpp"
#include "tests/support/supervised_example.hpp"
#include "tests/support/table_model.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tokenizer_folder.hpp"

using namespace remat;
namespace fs = std::filesystem;

namespace {

void write_lines(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// The labelled runs of an example, each decoded.
std::vector<std::string> labelled_texts(const data::SupervisedExample& e, const text::Tokenizer& tokenizer) {
    std::vector<std::string> runs;
    std::vector<std::int64_t> run;
    for (std::size_t i = 0; i <= e.labels.size(); ++i) {
        if (i < e.labels.size() && e.labels[i] != data::ignore_label) {
            CHECK(e.labels[i] == e.input_ids[i]);
            run.push_back(e.labels[i]);
        } else if (!run.empty()) {
            runs.push_back(tokenizer.decode_as_hf(run, false));
            run.clear();
        }
    }
    return runs;
}

std::string supervised_error(const fs::path& file, const text::Tokenizer& tokenizer, const text::ChatTemplate* chat,
                             data::SupervisedFormat format) {
    try {
        data::read_supervised(file, tokenizer, chat, {.format = format});
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("supervised examples: text, completion and chat, labelled on the answers") {
    const test::TempDir tmp("supervised");
    const test::TempDir unpacked("supervised-qwen");
    const fs::path qwen = test::tokenizer_folder("qwen2", unpacked);
    const text::HfTokenizer tokenizer = text::HfTokenizer::from_folder(qwen);
    const text::ChatTemplate chat = text::ChatTemplate::from_folder(qwen);
    const fs::path file = tmp.path / "data.jsonl";

    SUBCASE("chat: only the assistant turns, each with its end of turn, carry labels") {
        const std::string line =
            R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi {{ x }}"},)"
            R"( {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"},)"
            R"( {"role": "assistant", "content": "Goodbye, 世界."}]})";
        write_lines(file, line + "\n\n" + line + "\n");  // a blank line between is skipped
        const data::SupervisedExamples ex = data::read_supervised(file, tokenizer, &chat, {.format = data::SupervisedFormat::chat});
        REQUIRE(ex.examples.size() == 2);
        const data::SupervisedExample& e = ex.examples[0];
        const auto conversation = nlohmann::ordered_json::parse(line);
        CHECK(e.input_ids == tokenizer.encode(chat.apply(conversation, false)));
        CHECK(labelled_texts(e, tokenizer) == std::vector<std::string>{"Hello!<|im_end|>\n", "Goodbye, 世界.<|im_end|>\n"});
        const data::SupervisedExamples all =
            data::read_supervised(file, tokenizer, &chat, {.format = data::SupervisedFormat::chat, .mask_prompt = false});
        CHECK(all.examples[0].labels == all.examples[0].input_ids);
    }
    SUBCASE("completion: tokenizer(prompt + completion), the prompt's tokens unlabelled") {
        write_lines(file, R"({"prompt": "Q: What is 2+2?\nA:", "completion": " 4, of course."})" "\n");
        const data::SupervisedExamples ex = data::read_supervised(file, tokenizer, nullptr, {.format = data::SupervisedFormat::completion});
        const data::SupervisedExample& e = ex.examples.at(0);
        CHECK(e.input_ids == tokenizer.encode_with_special_tokens("Q: What is 2+2?\nA: 4, of course."));
        CHECK(labelled_texts(e, tokenizer) == std::vector<std::string>{" 4, of course."});
    }
    SUBCASE("text: every token labelled; long examples cut and counted") {
        write_lines(file, R"({"text": "one two three four five six seven"})" "\n" R"({"text": "a short one"})");  // no final newline
        const data::SupervisedExamples ex =
            data::read_supervised(file, tokenizer, nullptr, {.format = data::SupervisedFormat::text, .max_tokens = 3});
        REQUIRE(ex.examples.size() == 2);
        CHECK(ex.cut == 1);
        CHECK(ex.examples[0].input_ids.size() == 3);
        CHECK(ex.examples[0].labels == ex.examples[0].input_ids);
        CHECK(ex.examples[1].input_ids == tokenizer.encode_with_special_tokens("a short one"));
    }
    SUBCASE("completion: an answer cut away entirely leaves the example out, counted; all of them is an error") {
        write_lines(file, R"({"prompt": "Q: What is 2+2? Think it over carefully.", "completion": " 4."})" "\n"
                          R"({"prompt": "Q:", "completion": " 5."})" "\n");
        const data::SupervisedOptions options{.format = data::SupervisedFormat::completion, .max_tokens = 6};
        const data::SupervisedExamples ex = data::read_supervised(file, tokenizer, nullptr, options);
        CHECK(ex.unlabelled == 1);
        CHECK(ex.cut == 1);
        REQUIRE(ex.examples.size() == 1);
        CHECK(labelled_texts(ex.examples[0], tokenizer) == std::vector<std::string>{" 5."});
        write_lines(file, R"({"prompt": "Q: What is 2+2? Think it over carefully.", "completion": " 4."})" "\n");
        CHECK_THROWS_WITH_AS(data::read_supervised(file, tokenizer, nullptr, options),
                             (file.string() + ": no example has a labelled token within its first 6 tokens").c_str(), FormatError);
    }
    SUBCASE("bad lines: the file and line number") {
        const auto error = [&](const std::string& text, data::SupervisedFormat format) {
            write_lines(file, text);
            return supervised_error(file, tokenizer, &chat, format);
        };
        const std::string f = file.string();
        CHECK(error("{\"text\": \"ok\"}\n[1, 2]\n", data::SupervisedFormat::text) == f + ":2: expected a JSON object, one example per line");
        CHECK(error("{\"text\": \"ok\"}\n\n{\"text\": \n", data::SupervisedFormat::text).starts_with(f + ":3: not JSON ("));
        CHECK(error("{\"txt\": \"ok\"}\n", data::SupervisedFormat::text) == f + ":1: no \"text\" field");
        CHECK(error("{\"text\": 3}\n", data::SupervisedFormat::text) == f + ":1: \"text\" must be a string");
        CHECK(error("{\"prompt\": \"a\"}\n", data::SupervisedFormat::completion) == f + ":1: no \"completion\" field");
        CHECK(error("{\"text\": \"\xff\xfe\"}\n", data::SupervisedFormat::text).starts_with(f + ":1: not JSON ("));
        CHECK(error("{\"messages\": []}\n", data::SupervisedFormat::chat) == f + ":1: \"messages\" must be a non-empty list of messages");
        CHECK(error("{\"messages\": [{\"content\": \"x\"}]}\n", data::SupervisedFormat::chat) ==
              f + ":1: every message must be an object with a \"role\" string");
        CHECK(error("{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}\n", data::SupervisedFormat::chat) ==
              f + ":1: the conversation has no assistant message to learn from");
        CHECK(error("\n\n", data::SupervisedFormat::text) == f + ": no examples");
        const text::ChatTemplate refusing("{{ raise_exception('Conversation roles must alternate') }}");
        write_lines(file, R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]})");
        CHECK(supervised_error(file, tokenizer, &refusing, data::SupervisedFormat::chat) ==
              f + ":1: the chat template stops: Conversation roles must alternate");
        CHECK(supervised_error(file, tokenizer, nullptr, data::SupervisedFormat::chat) == f + ": the chat format needs the model's chat template");
        CHECK_THROWS_WITH_AS(data::parse_supervised_format("jsonl"), "unknown data format \"jsonl\" (the formats are text, completion and chat)",
                             ValueError);
    }
}

TEST_CASE("supervised batches: padded on the right as DataCollatorForSeq2Seq; the loss is the examples' own") {
    data::SupervisedExamples ex;
    ex.examples = {test::supervised_example({5, 9, 14, 3, 27}, 2), test::supervised_example({8, 1, 1, 40, 33, 12, 6, 19, 2}, 4),
                   test::supervised_example({30, 31, 32}, 0)};
    const data::SupervisedBatches batches(ex, 0, "examples");
    CHECK(batches.size() == 3);
    CHECK(batches.tokens_per_example() == 6);  // 17 tokens over 3, rounded up

    const std::vector<std::uint64_t> all{0, 1, 2};
    const data::Batch b = batches.batch(all, {});
    REQUIRE(b.id("input_ids").shape()[1] == 9);
    CHECK(b.id("input_ids")(0, 4) == 27);
    CHECK(b.id("input_ids")(0, 5) == 0);
    CHECK(b.id("labels")(0, 1) == data::ignore_label);
    CHECK(b.id("labels")(0, 2) == 14);
    CHECK(b.id("labels")(2, 3) == data::ignore_label);
    CHECK(b.id("attention_mask")(2, 2) == 1);
    CHECK(b.id("attention_mask")(2, 3) == 0);

    for (const char* hf_class : {"GPT2LMHeadModel", "LlamaForCausalLM"}) {
        CAPTURE(hf_class);
        auto model = test::table_model(hf_class, {.n_layer = 2, .n_embd = 16, .n_head = 4, .vocab_size = 50, .n_positions = 16}, 3);
        model->set_training(false);
        // Each example alone, weighted by the tokens it predicts (labels after the first), against the batch.
        double total = 0, counted = 0;
        for (std::uint64_t i = 0; i < 3; ++i) {
            const std::vector<std::uint64_t> one{i};
            double n = 0;
            for (std::size_t t = 1; t < ex.examples[i].labels.size(); ++t) n += ex.examples[i].labels[t] != data::ignore_label;
            total += n * model->training_loss(batches.batch(one, {})).value().data()[0];
            counted += n;
        }
        const double padded = model->training_loss(b).value().data()[0];
        CHECK(padded == doctest::Approx(total / counted).epsilon(1e-6));
    }
    CHECK_THROWS_AS(data::SupervisedBatches({}, 0, "none"), ValueError);
    const std::vector<std::uint64_t> past{3};
    CHECK_THROWS_WITH_AS(batches.batch(past, {}), "examples: example 3 of 3", ValueError);
}
