#include "cli/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli/errors.hpp"
#include "cli/flags.hpp"
#include "cli/numbers.hpp"
#include "cli/output.hpp"
#include "cli/plot_axis.hpp"
#include "cli/plot_log.hpp"
#include "cli/plot_scene.hpp"
#include "remat/hf/load.hpp"

namespace remat::cli {

namespace fs = std::filesystem;
using namespace plotting;

namespace {

// Tableau's ten colours (matplotlib's default cycle): distinct, and readable on white.
constexpr Colour palette[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},  {148, 103, 189},
                              {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
constexpr Colour ink{34, 34, 34}, grey{102, 102, 102}, grid{230, 230, 230}, frame{153, 153, 153};
constexpr double tick_size = 11, label_size = 12, title_size = 15, legend_size = 11;

// Text as valid UTF-8 (a file name may hold any bytes; cairo refuses invalid text): other bytes become '?'.
std::string valid_utf8(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = n > 0 && i + n <= s.size();
        for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
        out += ok ? s.substr(i, n) : "?";
        i += ok ? n : 1;
    }
    return out;
}

// Each log's name in the legend and title: its file name, or the path as given when two file names agree.
std::vector<std::string> names_of(const std::vector<fs::path>& logs) {
    std::vector<std::string> names;
    for (const fs::path& p : logs) names.push_back(p.filename().string());
    for (std::size_t i = 0; i < names.size(); ++i)
        if (std::count(names.begin(), names.end(), names[i]) > 1) {
            for (std::size_t j = 0; j < logs.size(); ++j) names[j] = logs[j].string();
            break;
        }
    for (std::string& n : names) n = valid_utf8(n);
    return names;
}

// TensorBoard's smoothing: an exponential moving average with weight w on the past, debiased so that
// the first values are not pulled towards zero.
std::vector<double> smoothed(const std::vector<Sample>& samples, double w) {
    std::vector<double> out;
    double average = 0, weight = 0;
    for (const Sample& s : samples) {
        average = average * w + (1 - w) * s.loss;
        weight = weight * w + (1 - w);
        out.push_back(average / weight);
    }
    return out;
}

struct Series {
    std::string label;
    Colour colour;
    bool validation;
};

// Losses past ±1e12 are drawn there: a range of ±1e308 would overflow the axis's arithmetic (NaN
// coordinates), and no loss worth reading is that large.
constexpr double loss_edge = 1e12;
double on_axis(double loss) { return std::clamp(loss, -loss_edge, loss_edge); }

// The plot area in pixels and the data range it shows.
struct Frame {
    double left, right, top, bottom;
    Ticks x, y;
    Point at(double tokens, double loss) const {
        return {left + (tokens - x.low) / (x.high - x.low) * (right - left),
                bottom - (on_axis(loss) - y.low) / (y.high - y.low) * (bottom - top)};
    }
};

Line polyline(std::vector<Point> points, Colour colour, double width, double opacity, std::string kind) {
    return {std::move(points), colour, width, opacity, std::move(kind)};
}

Label label(Point at, std::string text, double size, Anchor anchor, Colour colour) {
    return {at, std::move(text), size, anchor, false, false, colour};
}

// The points of a drawn line, and between them one every 3 px: what the legend must not hide.
void trace(std::vector<Point>& drawn, const std::vector<Point>& line) {
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (i > 0) {
            const Point a = line[i - 1], b = line[i];
            const int n = static_cast<int>(std::hypot(b.x - a.x, b.y - a.y) / 3);
            for (int k = 1; k < n; ++k) {
                const double t = static_cast<double>(k) / n;
                drawn.push_back({a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)});
            }
        }
        drawn.push_back(line[i]);
    }
}

// The legend in the corner of the plot area that hides the least of the data (top right first), with
// 5 px to spare around the box.
void add_legend(Scene& scene, const Frame& f, const std::vector<Series>& entries, const std::vector<Point>& drawn) {
    const double pad = 8, row = 18, sample = 26;
    double text = 0;
    for (const Series& e : entries) text = std::max(text, text_width(e.label, legend_size));
    const double w = pad + sample + 6 + text + pad, h = pad + row * static_cast<double>(entries.size()) + pad - 4;
    const double inset = 10;
    const Point corners[] = {{f.right - inset - w, f.top + inset},
                             {f.left + inset, f.bottom - inset - h},
                             {f.left + inset, f.top + inset},
                             {f.right - inset - w, f.bottom - inset - h}};
    Point best = corners[0];
    std::size_t fewest = drawn.size() + 1;
    for (const Point& c : corners) {
        const auto hidden = static_cast<std::size_t>(std::count_if(drawn.begin(), drawn.end(), [&](Point p) {
            return p.x >= c.x - 5 && p.x <= c.x + w + 5 && p.y >= c.y - 5 && p.y <= c.y + h + 5;
        }));
        if (hidden < fewest) fewest = hidden, best = c;
    }
    Box box{best.x, best.y, w, h, {255, 255, 255}, {204, 204, 204}};
    box.stroked = true;
    box.fill_opacity = 0.9;
    scene.shapes.push_back(box);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Series& e = entries[i];
        const double y = best.y + pad + row * static_cast<double>(i) + 6;
        const double x0 = best.x + pad, x1 = x0 + sample;
        scene.shapes.push_back(polyline({{x0, y}, {x1, y}}, e.colour, e.validation ? 1.5 : 2, 1, "legend"));
        if (e.validation) scene.shapes.push_back(Marker{{(x0 + x1) / 2, y}, 3.5, 1.5, e.colour, "legend"});
        scene.shapes.push_back(label({x1 + 6, y + 4}, e.label, legend_size, Anchor::start, ink));
    }
}

Scene draw(const std::vector<plotting::RunLog>& runs, const std::vector<std::string>& names, const std::string& title,
           const PlotOptions& o) {
    double max_tokens = 0, low = INFINITY, high = -INFINITY;
    for (const plotting::RunLog& r : runs)
        for (const auto* series : {&r.train, &r.valid})
            for (const Sample& s : *series) {
                max_tokens = std::max(max_tokens, s.tokens);
                low = std::min(low, on_axis(s.loss));
                high = std::max(high, on_axis(s.loss));
            }

    Frame f{};
    f.top = 40;
    f.bottom = o.height - 48.0;
    // A margin of 1.5% keeps the extreme points (and a marker's radius) off the frame.
    const double margin = 0.015 * (high - low);
    f.y = nice_ticks(low - margin, high + margin, std::max(3, static_cast<int>((f.bottom - f.top) / 45)));
    double label_width = 0;
    for (const double v : f.y.values)
        label_width = std::max(label_width, text_width(decimal_label(v, f.y.step), tick_size));
    f.left = 28 + label_width + 8;
    f.right = o.width - 20.0;
    f.x = nice_ticks(0, 1.02 * max_tokens, std::max(2, static_cast<int>((f.right - f.left) / 80)));

    Scene scene{o.width, o.height, {}};
    for (const double v : f.y.values) {
        const double y = f.at(0, v).y;
        scene.shapes.push_back(polyline({{f.left, y}, {f.right, y}}, grid, 1, 1, "grid"));
        scene.shapes.push_back(label({f.left - 6, y + 4}, decimal_label(v, f.y.step), tick_size, Anchor::end, grey));
    }
    for (const double v : f.x.values) {
        const double x = f.at(v, f.y.low).x;
        scene.shapes.push_back(polyline({{x, f.top}, {x, f.bottom}}, grid, 1, 1, "grid"));
        scene.shapes.push_back(label({x, f.bottom + 16}, count_label(v), tick_size, Anchor::middle, grey));
    }
    Box border{f.left, f.top, f.right - f.left, f.bottom - f.top, {}, frame};
    border.filled = false;
    border.stroked = true;
    scene.shapes.push_back(border);
    const double middle = (f.left + f.right) / 2;
    scene.shapes.push_back(label({middle, o.height - 12.0}, "tokens", label_size, Anchor::middle, ink));
    Label y_label = label({18, (f.top + f.bottom) / 2}, "loss", label_size, Anchor::middle, ink);
    y_label.vertical = true;
    scene.shapes.push_back(y_label);
    Label heading = label({middle, 24}, title, title_size, Anchor::middle, ink);
    heading.bold = true;
    scene.shapes.push_back(heading);

    std::vector<Series> legend;
    std::vector<Point> drawn;  // for placing the legend
    const bool one = runs.size() == 1;
    const double w = o.smoothing;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const plotting::RunLog& r = runs[i];
        const Colour train = palette[(one ? 0 : i) % std::size(palette)];
        const Colour valid = palette[(one ? 1 : i) % std::size(palette)];
        if (!r.train.empty()) {
            std::vector<Point> raw;
            for (const Sample& s : r.train) raw.push_back(f.at(s.tokens, s.loss));
            trace(drawn, raw);
            if (w > 0) {
                const std::vector<double> ema = smoothed(r.train, w);
                std::vector<Point> line;
                for (std::size_t k = 0; k < r.train.size(); ++k) line.push_back(f.at(r.train[k].tokens, ema[k]));
                scene.shapes.push_back(polyline(std::move(raw), train, 1, 0.3, "train-raw"));
                scene.shapes.push_back(polyline(std::move(line), train, 1.8, 1, "train"));
            } else {
                scene.shapes.push_back(polyline(std::move(raw), train, 1.2, 1, "train"));
            }
            if (r.train.size() == 1)  // a line of one point shows nothing
                scene.shapes.push_back(Marker{f.at(r.train[0].tokens, r.train[0].loss), 2, 1.5, train, "train"});
            char smoothing[48];
            std::snprintf(smoothing, sizeof smoothing, " (smoothed %g)", w);
            legend.push_back({(one ? "training loss" : names[i] + " training") + (w > 0 ? smoothing : ""), train, false});
        }
        if (!r.valid.empty()) {
            std::vector<Point> points;
            for (const Sample& s : r.valid) points.push_back(f.at(s.tokens, s.loss));
            trace(drawn, points);
            if (points.size() > 1) scene.shapes.push_back(polyline(points, valid, 1.5, 1, "valid"));
            for (const Point& p : points) scene.shapes.push_back(Marker{p, 3.5, 1.5, valid, "valid"});
            legend.push_back({one ? "validation loss" : names[i] + " validation", valid, true});
        }
    }
    add_legend(scene, f, legend, drawn);
    return scene;
}

// A picture's side: from a readable least up to what a PNG surface of cairo takes with memory to spare.
int pixels(const std::string& option, const std::string& text, std::int64_t minimum) {
    const std::int64_t n = parse_count(option, text, minimum);
    if (n > 16000) throw Failure(option + " must be at most 16000 pixels, got \"" + text + "\"");
    return static_cast<int>(n);
}

enum class Format { png, svg };

Format format_of(const fs::path& out) {
    std::string ext = out.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == ".png") return Format::png;
    if (ext == ".svg") return Format::svg;
    throw Failure(out.string() + ": the picture's format comes from its extension, .png or .svg");
}

}  // namespace

int plot(const PlotOptions& o) {
    const Format format = format_of(o.out);
    check_output_file("--out", o.out, Reading(o.logs.begin(), o.logs.end()));
    std::vector<plotting::RunLog> runs;
    std::size_t n_train = 0, n_valid = 0;
    for (const fs::path& log : o.logs) {
        runs.push_back(read_log(log));
        n_train += runs.back().train.size();
        n_valid += runs.back().valid.size();
    }
    const std::vector<std::string> names = names_of(o.logs);
    std::string title;
    for (const std::string& n : names) title += (title.empty() ? "" : ", ") + n;
    if (o.title) title = valid_utf8(*o.title);

    const CairoScope cairo;
    const Scene scene = draw(runs, names, title, o);
    hf::write_text_atomically(o.out, format == Format::png ? to_png(scene) : to_svg(scene));
    std::printf("wrote %s (%d x %d): %zu training and %zu validation losses from %zu log%s\n", o.out.string().c_str(),
                o.width, o.height, n_train, n_valid, o.logs.size(), o.logs.size() == 1 ? "" : "s");
    return exit_ok;
}

Command add_plot_command(CLI::App& remat) {
    struct Flags {
        std::vector<std::string> logs;
        Text out, title, smooth, width, height;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = remat.add_subcommand(
        "plot", "Draw training and validation loss against tokens from `remat train --log` files, as PNG or SVG");
    command->add_option("FILE.jsonl", flags->logs, "Training logs (one JSON object per step); several compare runs")
        ->required()
        ->type_name("");
    add(command, "-o,--out", flags->out, "The picture: a .png or .svg file (written atomically)", "FILE")->required();
    add(command, "--title", flags->title, "The title (default: the log's file name)", "TEXT");
    add(command, "--smooth", flags->smooth,
        "Training-loss smoothing, TensorBoard's moving-average weight in [0, 1); 0 draws the raw loss only (default: 0.9)",
        "W");
    add(command, "--width", flags->width, "Width in pixels (default: 800)", "PX");
    add(command, "--height", flags->height, "Height in pixels (default: 500)", "PX");
    command->footer(
        "Examples:\n"
        "  remat plot run.jsonl -o curve.png\n"
        "  remat plot base.jsonl blocks.jsonl -o compare.svg --title \"GPT-2 20M\" --smooth 0.95");
    return {command, [flags] {
                PlotOptions o;
                for (const std::string& l : flags->logs) o.logs.emplace_back(l);
                o.out = flags->out.value;
                if (flags->title.given()) o.title = flags->title.value;
                if (flags->smooth.given()) {
                    o.smoothing = parse_number("--smooth", flags->smooth.value, 0, false);
                    if (o.smoothing >= 1)
                        throw Failure("--smooth must be a number from 0 up to (not including) 1, got \"" +
                                      flags->smooth.value + "\"");
                }
                if (flags->width.given()) o.width = pixels("--width", flags->width.value, 200);
                if (flags->height.given()) o.height = pixels("--height", flags->height.value, 150);
                return plot(o);
            }};
}

}  // namespace remat::cli
