// `remat plot` against its contract (docs/cli.md): logs the test writes itself, the built binary run
// as a user would, and the pictures read back — SVG as XML (one polyline point per training step, one
// marker per validation), PNG by its signature and header.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

// fixtures, scratch(), read_text, write_text, Result, run_remat, check_error, has_line
#include "tests/cli/run_remat.hpp"

namespace {

// Well-formed XML, as far as the SVG writer's output goes: one prolog, elements that nest and close
// with their own names, attribute values in double quotes, no stray '<' or '&' in text or values.
// Returns the problem, or "" when well-formed.
std::string xml_problem(const std::string& xml) {
    std::vector<std::string> open;
    std::size_t i = 0, roots = 0;
    const auto entity_ok = [&](std::size_t at) {
        for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
            if (xml.compare(at, std::string(e).size(), e) == 0) return true;
        return false;
    };
    if (xml.rfind("<?xml ", 0) != 0) return "no XML declaration";
    i = xml.find("?>") + 2;
    while (i < xml.size()) {
        if (xml[i] != '<') {
            if (open.empty() && xml[i] != '\n') return "text outside the root at " + std::to_string(i);
            if (xml[i] == '&' && !entity_ok(i)) return "bad entity at " + std::to_string(i);
            ++i;
            continue;
        }
        const bool closing = xml[i + 1] == '/';
        std::size_t j = i + (closing ? 2 : 1);
        const std::size_t name_start = j;
        while (j < xml.size() && (std::isalnum(static_cast<unsigned char>(xml[j])) || xml[j] == '-' || xml[j] == ':')) ++j;
        const std::string name = xml.substr(name_start, j - name_start);
        if (name.empty()) return "element without a name at " + std::to_string(i);
        if (closing) {
            if (open.empty() || open.back() != name || xml[j] != '>') return "</" + name + "> does not close an open element";
            open.pop_back();
            i = j + 1;
            continue;
        }
        for (;;) {  // attributes
            while (xml[j] == ' ') ++j;
            if (xml.compare(j, 2, "/>") == 0 || xml[j] == '>') break;
            const std::size_t eq = xml.find('=', j);
            if (eq == std::string::npos || xml[eq + 1] != '"') return "attribute without a quoted value in <" + name + ">";
            const std::size_t end = xml.find('"', eq + 2);
            if (end == std::string::npos) return "unterminated attribute in <" + name + ">";
            for (std::size_t k = eq + 2; k < end; ++k)
                if (xml[k] == '<' || (xml[k] == '&' && !entity_ok(k))) return "bad character in an attribute of <" + name + ">";
            j = end + 1;
        }
        if (open.empty() && ++roots > 1) return "more than one root element";
        if (xml[j] == '>') open.push_back(name);
        i = j + (xml[j] == '>' ? 1 : 2);
    }
    return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

// The number of points of the polyline of the class ("x,y" pairs separated by spaces).
std::size_t polyline_points(const std::string& svg, const std::string& kind) {
    const std::size_t at = svg.find("<polyline class=\"" + kind + "\"");
    REQUIRE_MESSAGE(at != std::string::npos, "no polyline of class " << kind);
    const std::size_t begin = svg.find("points=\"", at) + 8, end = svg.find('"', begin);
    const std::string points = svg.substr(begin, end - begin);
    return points.empty() ? 0 : count(points, " ") + 1;
}

// One line of a log as `remat train --log` writes it; valid_loss < 0 leaves validation out.
std::string step_line(int step, long tokens, double loss, double valid_loss = -1) {
    std::string line = "{\"step\": " + std::to_string(step) + ", \"epoch\": 0, \"tokens\": " + std::to_string(tokens) +
                       ", \"loss\": " + std::to_string(loss) +
                       ", \"lr\": 0.001, \"grad_norm\": 0.5, \"tokens_per_second\": 1234.5, \"peak_activation_bytes\": 1048576";
    if (valid_loss >= 0)
        line += ", \"valid_loss\": " + std::to_string(valid_loss) + ", \"valid_perplexity\": 20.1";
    return line + ", \"some_future_field\": [1, {\"x\": null}]}\n";
}

// 40 steps of 4096 tokens, validation every 10 steps and once more at the end (a line without "loss").
std::string forty_steps() {
    std::string log;
    for (int s = 1; s <= 40; ++s) log += step_line(s, 4096L * s, 5.0 - 0.05 * s, s % 10 == 0 ? 4.9 - 0.05 * s : -1);
    log += "{\"step\": 40, \"tokens\": 163840, \"valid_loss\": 2.85, \"valid_perplexity\": 17.3}\n";
    return log;
}

std::uint32_t big_endian(const std::string& bytes, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) v = v << 8 | static_cast<unsigned char>(bytes[at + k]);
    return v;
}

}  // namespace

TEST_CASE("the test's XML check rejects what is not well-formed") {
    CHECK(xml_problem("<?xml version=\"1.0\"?>\n<svg><text>a &amp; b</text><rect x=\"1\"/></svg>\n") == "");
    CHECK(xml_problem("<?xml version=\"1.0\"?>\n<svg><text></svg>") != "");
    CHECK(xml_problem("<?xml version=\"1.0\"?>\n<svg><text>a & b</text></svg>") != "");
    CHECK(xml_problem("<?xml version=\"1.0\"?>\n<svg><rect x=1/></svg>") != "");
    CHECK(xml_problem("<?xml version=\"1.0\"?>\n<svg></svg><svg></svg>") != "");
    CHECK(xml_problem("<svg></svg>") != "");
}

TEST_CASE("remat plot writes an SVG: one polyline point per training step, one marker per validation") {
    const fs::path log = scratch() / "run.jsonl", out = scratch() / "curve.svg";
    write_text(log, forty_steps());
    const Result r = run_remat({"plot", log.string(), "-o", out.string()});
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "wrote " + out.string() + " (800 x 500): 40 training and 4 validation losses from 1 log\n");
    const std::string svg = read_text(out);
    CHECK(xml_problem(svg) == "");
    CHECK(svg.find("width=\"800\" height=\"500\"") != std::string::npos);
    CHECK(polyline_points(svg, "train") == 40);      // smoothed
    CHECK(polyline_points(svg, "train-raw") == 40);  // the raw loss under it
    // Steps 10, 20, 30 and 40: the end-of-run line replaces step 40's validation, not its training loss.
    CHECK(polyline_points(svg, "valid") == 4);
    CHECK(count(svg, "<circle class=\"valid\"") == 4);
    CHECK(svg.find(">run.jsonl</text>") != std::string::npos);  // the default title
    CHECK(svg.find(">training loss (smoothed 0.9)</text>") != std::string::npos);
    CHECK(svg.find(">validation loss</text>") != std::string::npos);
    CHECK(svg.find(">tokens</text>") != std::string::npos);
    CHECK(svg.find(">loss</text>") != std::string::npos);
    // The token ticks (their step depends on the font's widths: 20k or 25k) all read "0" or "<n>k".
    const std::string tick_start = "text-anchor=\"middle\" fill=\"#666666\">";
    std::size_t ticks = 0;
    for (std::size_t at = svg.find(tick_start); at != std::string::npos; at = svg.find(tick_start, at + 1), ++ticks) {
        const std::size_t begin = at + tick_start.size();
        const std::string tick = svg.substr(begin, svg.find('<', begin) - begin);
        CAPTURE(tick);
        CHECK((tick == "0" || (tick.back() == 'k' && tick.find_first_not_of("0123456789") == tick.size() - 1)));
    }
    CHECK(ticks >= 5);
    CHECK(svg.find(">100k</text>") != std::string::npos);
    // No temporary left beside the picture.
    for (const auto& entry : fs::directory_iterator(scratch()))
        CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);

    SUBCASE("token ticks take SI-style suffixes, loss ticks the decimals their step needs") {
        const fs::path big = scratch() / "big.jsonl";
        write_text(big, step_line(1, 100000, 3.31) + step_line(2, 1200000, 3.2) + step_line(3, 2400000, 3.14));
        REQUIRE(run_remat({"plot", big.string(), "-o", out.string(), "--smooth", "0"}).code == 0);
        const std::string ticks = read_text(out);
        for (const std::string tick : {"0", "500k", "1M", "1.5M", "2.5M", "3.150", "3.300"}) {
            CAPTURE(tick);
            CHECK(ticks.find(">" + tick + "</text>") != std::string::npos);
        }
    }
    SUBCASE("--smooth 0 draws the raw loss only; --title replaces the file name, escaped for XML") {
        REQUIRE(run_remat({"plot", log.string(), "-o", out.string(), "--smooth", "0", "--title", "loss <&> \"tiny\""}).code == 0);
        const std::string raw = read_text(out);
        CHECK(xml_problem(raw) == "");
        CHECK(polyline_points(raw, "train") == 40);
        CHECK(raw.find("train-raw") == std::string::npos);
        CHECK(raw.find(">training loss</text>") != std::string::npos);
        CHECK(raw.find(">loss &lt;&amp;&gt; &quot;tiny&quot;</text>") != std::string::npos);
    }
    SUBCASE("several logs: one colour and two legend lines each, titled by their names") {
        const fs::path other = scratch() / "other.jsonl";
        write_text(other, step_line(1, 8192, 4.0) + step_line(2, 16384, 3.5, 3.6));
        const Result two = run_remat({"plot", log.string(), other.string(), "-o", out.string()});
        CHECK(two.out == "wrote " + out.string() + " (800 x 500): 42 training and 5 validation losses from 2 logs\n");
        const std::string svg2 = read_text(out);
        CHECK(xml_problem(svg2) == "");
        CHECK(count(svg2, "<circle class=\"valid\"") == 5);
        CHECK(count(svg2, "<polyline class=\"train\"") == 2);
        CHECK(svg2.find(">run.jsonl, other.jsonl</text>") != std::string::npos);
        CHECK(svg2.find(">other.jsonl validation</text>") != std::string::npos);
        CHECK(svg2.find(">run.jsonl training (smoothed 0.9)</text>") != std::string::npos);
    }
}

TEST_CASE("remat plot: a step logged twice keeps its later line (a resumed run appends)") {
    // Steps 1–6, then a run resumed from step 3 that logs 4–6 again with other losses.
    std::string resumed, clean;
    for (int s = 1; s <= 6; ++s) resumed += step_line(s, 1000L * s, 9.0 - s, s == 5 ? 4.5 : -1);
    for (int s = 4; s <= 6; ++s) resumed += step_line(s, 1000L * s, 7.0 - s, s == 5 ? 2.5 : -1);
    for (int s = 1; s <= 6; ++s) clean += step_line(s, 1000L * s, s <= 3 ? 9.0 - s : 7.0 - s, s == 5 ? 2.5 : -1);
    const fs::path a = scratch() / "resumed" / "log.jsonl", b = scratch() / "clean" / "log.jsonl";
    write_text(a, resumed);
    write_text(b, clean);
    const fs::path out_a = scratch() / "resumed.svg", out_b = scratch() / "clean.svg";
    const Result ra = run_remat({"plot", a.string(), "-o", out_a.string(), "--smooth", "0"});
    CHECK(ra.out == "wrote " + out_a.string() + " (800 x 500): 6 training and 1 validation losses from 1 log\n");
    REQUIRE(run_remat({"plot", b.string(), "-o", out_b.string(), "--smooth", "0"}).code == 0);
    const std::string svg = read_text(out_a);
    CHECK(polyline_points(svg, "train") == 6);
    CHECK(count(svg, "<circle class=\"valid\"") == 1);
    CHECK(svg == read_text(out_b));  // the same picture as the log without the superseded lines

    SUBCASE("two logs with the same file name are named by their paths") {
        const fs::path out = scratch() / "both.svg";
        REQUIRE(run_remat({"plot", a.string(), b.string(), "-o", out.string()}).code == 0);
        CHECK(read_text(out).find(">" + a.string() + " training (smoothed 0.9)</text>") != std::string::npos);
    }
}

TEST_CASE("remat plot writes a PNG of the requested size") {
    const fs::path log = scratch() / "png.jsonl", out = scratch() / "curve.png";
    write_text(log, forty_steps());
    const Result r = run_remat({"plot", log.string(), "-o", out.string(), "--width", "640", "--height", "360"});
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out == "wrote " + out.string() + " (640 x 360): 40 training and 4 validation losses from 1 log\n");
    const std::string png = read_text(out);
    REQUIRE(png.size() > 33);
    CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
    CHECK(png.substr(12, 4) == "IHDR");
    CHECK(big_endian(png, 16) == 640);
    CHECK(big_endian(png, 20) == 360);
    CHECK(png.substr(png.size() - 8, 4) == "IEND");

    // The extension decides, in any case.
    const fs::path upper = scratch() / "CURVE.PNG";
    REQUIRE(run_remat({"plot", log.string(), "-o", upper.string()}).code == 0);
    CHECK(read_text(upper).substr(1, 3) == "PNG");
}

TEST_CASE("remat plot's errors: one line naming the file and the line, and nothing written") {
    const fs::path out = scratch() / "never.svg";
    const auto bad = [&](const std::string& name, const std::string& text, const std::string& message) {
        const fs::path log = scratch() / name;
        write_text(log, text);
        check_error({"plot", log.string(), "-o", out.string()}, log.string() + message);
        CHECK(!fs::exists(out));
    };
    const std::string good = step_line(1, 100, 3.0);
    bad("truncated.jsonl", good + "{\"step\": 2, \"tokens\": 200, \"lo\n", ": line 2 is not valid JSON (it ends early)");
    bad("trailing-comma.jsonl", good + good + good + good + good + good + "{\"step\": 7, \"tokens\": 7, \"loss\": 3.1,}\n",
        ": line 7 is not valid JSON (column 38)");  // docs/cli.md's example
    bad("garbage.jsonl", good + good + "loss=3\n", ": line 3 is not valid JSON (column 1)");
    bad("array.jsonl", "[1, 2]\n" + good, ": line 1 is not a JSON object");
    bad("string-loss.jsonl", good + "{\"step\": 2, \"tokens\": 200, \"loss\": \"3.1\"}\n",
        ": line 2: \"loss\" must be a number, got \"3.1\"");
    bad("float-step.jsonl", "{\"step\": 1.5, \"tokens\": 200, \"loss\": 3}\n", ": line 1: \"step\" must be a whole number, got 1.5");
    bad("empty.jsonl", "", ": nothing to plot (no line with \"step\", \"tokens\" and \"loss\" or \"valid_loss\")");
    bad("blank.jsonl", "\n  \n{\"event\": \"start\"}\n{\"step\": 1, \"lr\": 0.1}\n",
        ": nothing to plot (no line with \"step\", \"tokens\" and \"loss\" or \"valid_loss\")");

    const fs::path log = scratch() / "good.jsonl";
    write_text(log, good);
    check_error({"plot", (scratch() / "missing.jsonl").string(), "-o", out.string()},
                (scratch() / "missing.jsonl").string() + ": cannot read: No such file or directory");
    check_error({"plot", log.string(), "-o", (scratch() / "curve.jpg").string()},
                (scratch() / "curve.jpg").string() + ": the picture's format comes from its extension, .png or .svg");
    check_error({"plot", log.string(), "-o", (scratch() / "nowhere" / "c.svg").string()},
                (scratch() / "nowhere" / "c.svg").string() + ": cannot write: folder " + (scratch() / "nowhere").string() +
                    " does not exist");
    check_error({"plot", log.string(), "-o", out.string(), "--smooth", "1"},
                "--smooth must be a number from 0 up to (not including) 1, got \"1\"");
    check_error({"plot", log.string(), "-o", out.string(), "--width", "50"},
                "--width must be a whole number of at least 200, got \"50\"");
    check_error({"plot", log.string(), "-o", out.string(), "--height", "99999"}, "--height must be at most 16000 pixels, got \"99999\"");
    check_error({"plot", log.string()}, "--out is required (see remat plot --help)");
    check_error({"plot", "-o", out.string()}, "FILE.jsonl is required (see remat plot --help)");
    CHECK(!fs::exists(out));

    // The last line of a log still being written (no newline yet) is left out with a warning.
    {
        const fs::path live = scratch() / "live.jsonl";
        write_text(live, good + "{\"step\": 2, \"tokens\": 200, \"lo");
        const Result r = run_remat({"plot", live.string(), "-o", (scratch() / "live.svg").string()});
        CHECK(r.code == 0);
        CHECK(r.err == "warning: " + live.string() + ": line 2 is incomplete (a run still writing?); left out\n");
    }

    // A failure leaves a picture already there untouched.
    write_text(out, "the old picture");
    check_error({"plot", log.string(), (scratch() / "truncated.jsonl").string(), "-o", out.string()},
                (scratch() / "truncated.jsonl").string() + ": line 2 is not valid JSON (it ends early)");
    CHECK(read_text(out) == "the old picture");
}
