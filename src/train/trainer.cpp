#include "remat/train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "remat/core/memory.hpp"
#include "remat/data/epoch_order.hpp"
#include "remat/dist/gradient_reducer.hpp"
#include "remat/dist/shards.hpp"
#include "remat/dist/world.hpp"
#include "remat/train/micro_batches.hpp"
#include "remat/train/run_folders.hpp"

namespace remat::train {

namespace fs = std::filesystem;

namespace {

constexpr const char* optimiser_file = "optimiser.safetensors";

// A sharded optimiser's file of rank R of N.
std::string shard_file(std::size_t rank, std::size_t ranks) {
    return "optimiser-rank-" + std::to_string(rank) + "-of-" + std::to_string(ranks) + ".safetensors";
}

// The optimiser state's files in a checkpoint folder: optimiser.safetensors, or a sharded state's
// file of every rank that saved it. FormatError when neither is whole.
std::vector<fs::path> optimiser_files(const fs::path& folder) {
    if (fs::exists(folder / optimiser_file)) return {folder / optimiser_file};
    std::optional<std::size_t> ranks;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
        const std::string name = e.path().filename().string();
        const std::size_t of = name.find("-of-");
        if (!name.starts_with("optimiser-rank-") || of == std::string::npos || !name.ends_with(".safetensors")) continue;
        const std::string count = name.substr(of + 4, name.size() - of - 4 - std::string_view(".safetensors").size());
        if (count.empty() || count.size() > 6 || count.find_first_not_of("0123456789") != std::string::npos) continue;
        ranks = std::stoul(count);
        break;
    }
    if (!ranks || *ranks == 0)
        throw FormatError(folder.string() + ": no optimiser state (" + optimiser_file + ", or optimiser-rank-R-of-N.safetensors from a sharded run)");
    std::vector<fs::path> files;
    for (std::size_t r = 0; r < *ranks; ++r) {
        files.push_back(folder / shard_file(r, *ranks));
        if (!fs::is_regular_file(files.back()))
            throw FormatError(files.back().string() + ": missing; the optimiser state was saved sharded over " + std::to_string(*ranks) +
                              " ranks and needs every rank's file");
    }
    for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
        const std::string name = e.path().filename().string();
        if (name.starts_with("optimiser-rank-") && std::find(files.begin(), files.end(), e.path()) == files.end())
            throw FormatError(e.path().string() + ": not one of the " + std::to_string(*ranks) + " files of the sharded optimiser state beside it");
    }
    return files;
}

constexpr const char* run_state_file = "run_state.json";
// Validation's batches (a masked LM's masks) are the same at every validation: keyed by a step no run reaches.
constexpr std::uint64_t validation_step = std::numeric_limits<std::uint64_t>::max();

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

const char* not_finite_kind(double value) { return std::isnan(value) ? "nan" : "infinite"; }

}  // namespace

// The run's examples in order: epoch after epoch, each in the order EpochOrder draws from the seed
// and the epoch; the position is the RunState's (epoch, index).
struct Trainer::Stream {
    Stream(const data::Dataset& data, std::uint64_t seed) : data_(data), seed_(seed), size_(data.size()) {}

    data::Batch next(std::size_t batch, RunState& at, const data::MaskingKey& key) {
        std::vector<std::uint64_t> indices(batch);
        for (std::uint64_t& index : indices) {
            turn(at);
            if (!order_ || order_epoch_ != at.epoch) {
                order_.emplace(seed_, at.epoch, size_);
                order_epoch_ = at.epoch;
            }
            index = (*order_)[at.index];
            ++at.index;
        }
        return data_.batch(indices, key);
    }
    // Moves past `batch` examples without reading them (another rank's micro-batch).
    void skip(std::size_t batch, RunState& at) const {
        for (std::size_t b = 0; b < batch; ++b) {
            turn(at);
            ++at.index;
        }
    }
    double epochs_done(const RunState& at) const {
        return static_cast<double>(at.epoch) + static_cast<double>(at.index) / static_cast<double>(size_);
    }

private:
    void turn(RunState& at) const {
        if (at.index < size_) return;
        ++at.epoch;
        at.index = 0;
    }

    const data::Dataset& data_;
    std::uint64_t seed_, size_;
    std::optional<data::EpochOrder> order_;
    std::uint64_t order_epoch_ = 0;
};

namespace {
// Ranks started with different arguments would compute different runs and mix them in the sum
// (or wait forever in a collective the other never calls): refused on every rank before the first
// step, naming the first difference from rank 0's.
void check_same_arguments(const dist::World& world, const std::vector<std::pair<std::string, std::string>>& arguments) {
    using Arguments = std::vector<std::pair<std::string, std::string>>;
    const auto unpack = [](const std::string& text) {
        Arguments list;
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t name_end = text.find('\0', at), value_end = text.find('\0', name_end + 1);
            list.emplace_back(text.substr(at, name_end - at), text.substr(name_end + 1, value_end - name_end - 1));
            at = value_end + 1;
        }
        return list;
    };
    std::string mine;
    for (const auto& [name, value] : arguments) mine += name + '\0' + value + '\0';
    const std::vector<std::string> all = world.all_gather(mine);
    const Arguments first = unpack(all[0]);
    auto shown = [](const Arguments& list, std::size_t i) { return i < list.size() ? list[i].first + " " + list[i].second : "no more arguments"; };
    for (std::size_t r = 1; r < all.size(); ++r) {
        const Arguments other = unpack(all[r]);
        for (std::size_t i = 0; i < std::max(first.size(), other.size()); ++i)
            if (i >= first.size() || i >= other.size() || first[i] != other[i])
                throw RanksDiffer("rank " + std::to_string(r) + " was started with " + shown(other, i) + ", rank 0 with " + shown(first, i) +
                                 ": every rank must be given the same arguments");
    }
}

}  // namespace

Trainer::Trainer(Trainable& model, const data::Dataset& data, TrainerOptions options)
    : model_(model), data_(data), o_(std::move(options)) {
    if (o_.steps < 1) throw ValueError("a training run needs at least 1 step, got " + std::to_string(o_.steps));
    if (o_.batch < 1 || o_.accumulate < 1)
        throw ValueError("batch and accumulate must be at least 1, got " + std::to_string(o_.batch) + " and " +
                         std::to_string(o_.accumulate));
    if (data_.size() == 0) throw ValueError(data_.name() + ": no examples to train on");
    if (o_.valid && o_.valid->size() == 0) throw ValueError(o_.valid->name() + ": no examples to validate on");
    if (o_.save && !o_.save_model) throw ValueError("a run that saves checkpoints needs save_model");
    if (o_.world) {
        ranks_ = o_.world->size();
        rank_ = o_.world->rank();
        if (ranks_ > 1) {
            // Where the run saves and how the ranks share the update too: the same on every rank, or a
            // rank was started wrong (a sharded rank would wait for sums an unsharded one never sends).
            auto compared = o_.arguments;
            compared.emplace_back("--save", o_.save ? fs::absolute(*o_.save).lexically_normal().string() : "(none)");
            compared.emplace_back("--shard-optimizer", o_.shard_optimizer ? "yes" : "no");
            check_same_arguments(*o_.world, compared);
        }
    }
    if (o_.save && rank_ == 0) save_lock_ = std::make_unique<SaveFolderLock>(*o_.save);
    model_.set_training(true);
    std::vector<bool> owned;  // this rank's share; a frozen parameter, which has no state, counts as everyone's
    if (ranks_ > 1 && o_.shard_optimizer) {
        const std::vector<Param*> params = model_.parameters();
        std::vector<std::size_t> sizes;
        for (const Param* p : params) sizes.push_back(p->frozen ? 0 : p->value.size());
        owners_ = dist::owners_by_elements(sizes, ranks_);
        for (std::size_t i = 0; i < params.size(); ++i) owned.push_back(params[i]->frozen || owners_[i] == rank_);
    }
    optimiser_ = model_.trainer_adamw(o_.adamw, std::move(owned));
    // Every rank's, for the run's summary (World gathers text of any length; a count is short text).
    const std::string mine = std::to_string(optimiser_->state_bytes());
    for (const std::string& bytes : ranks_ > 1 ? o_.world->all_gather(mine) : std::vector<std::string>{mine})
        optimiser_bytes_.push_back(std::stoull(bytes));
    state_ = RunState{.seed = o_.seed, .arguments = o_.arguments};
}

Trainer::~Trainer() = default;

void Trainer::resume(const fs::path& folder) {
    const RunState saved = load_run_state(folder / run_state_file);
    for (const auto& argument : o_.arguments) {
        const std::string& name = argument.first;
        const std::string& value = argument.second;
        const auto find = [&](const auto& list) {
            return std::find_if(list.begin(), list.end(), [&](const auto& a) { return a.first == name; });
        };
        auto was = find(saved.arguments);
        if (was == saved.arguments.end()) {  // saved before the argument existed: it ran with its default
            was = find(o_.added_arguments);
            if (was == o_.added_arguments.end())
                throw FormatError(folder.string() + ": the saved run has no " + name + "; it was not written by this remat");
        }
        if (was->second != value)
            throw ResumeMismatch(name + " " + value + " differs from the run being resumed (" + was->second + " in " +
                                 folder.string() + ")");
    }
    const std::vector<fs::path> files = optimiser_files(folder);
    optimiser_->load_state(files);
    if (optimiser_->step() != saved.step)
        throw FormatError(folder.string() + ": the optimiser state is at step " + std::to_string(optimiser_->step()) +
                          ", the run state at step " + std::to_string(saved.step));
    // The position follows from the step (every step takes batch x accumulate x ranks examples): an
    // edited run state would silently skip or repeat data.
    const std::string state_file = (folder / run_state_file).string();
    if (saved.step > o_.steps)
        throw FormatError(state_file + ": step " + std::to_string(saved.step) + " is past this run's " + std::to_string(o_.steps) + " steps");
    const std::uint64_t per_step = o_.batch * o_.accumulate * ranks_, size = data_.size();
    const std::uint64_t taken = static_cast<std::uint64_t>(saved.step) * per_step;  // steps and sizes are bounded: no overflow
    // An epoch turns when the next example is taken: after exactly one, the position is (0, size).
    const std::uint64_t epoch = taken ? (taken - 1) / size : 0, index = taken ? (taken - 1) % size + 1 : 0;
    if (saved.epoch != epoch || saved.index != index)
        throw FormatError(state_file + ": epoch " + std::to_string(saved.epoch) + ", index " + std::to_string(saved.index) +
                          " is not where step " + std::to_string(saved.step) + " stands with " + std::to_string(size) + " examples, " +
                          std::to_string(per_step) + " a step (epoch " + std::to_string(epoch) + ", index " + std::to_string(index) + ")");
    // The files as the run saved them (the weights were loaded from here already: refused before a step).
    for (const auto& [name, digest] : saved.files)
        if (file_digest(folder / name) != digest)
            throw FormatError((folder / name).string() + ": changed since the run saved it (its digest is not the one in " +
                              run_state_file + "); resume from another checkpoint");
    state_.step = saved.step;
    state_.epoch = saved.epoch;
    state_.index = saved.index;
    state_.tokens = saved.tokens;
}

data::Batch Trainer::next_batch() const {
    RunState at = state_;
    Stream first(data_, o_.seed);
    return first.next(o_.batch, at, {.seed = o_.seed, .step = static_cast<std::uint64_t>(state_.step + 1), .micro_batch = 0});
}

// Data parallel: rank r takes the batches b with b mod N = r, and the per-batch sums are added in
// batch order on every rank, as one process adds them.
double Trainer::validate() {
    if (!o_.valid) throw ValueError("validate: the run has no validation data");
    const data::Dataset& valid = *o_.valid;
    const std::uint64_t count = o_.valid_examples ? std::min(o_.valid_examples, valid.size()) : valid.size();
    ad::UseBackend use(tape_);
    ad::NoGrad no_grad;
    const Autocast autocast(o_.precision);
    model_.set_training(false);
    std::vector<double> batch_sums((count + o_.batch - 1) / o_.batch, 0.0);  // Σ of the batch's example losses
    for (std::size_t k = rank_; k < batch_sums.size(); k += ranks_) {
        const std::uint64_t first = k * o_.batch, b = std::min<std::uint64_t>(o_.batch, count - first);
        std::vector<std::uint64_t> indices(b);
        for (std::uint64_t i = 0; i < b; ++i) indices[i] = first + i;
        const data::Batch in = valid.batch(indices, {.seed = o_.seed, .step = validation_step, .micro_batch = k});
        batch_sums[k] = static_cast<double>(model_.training_loss(in).item()) * static_cast<double>(b);
    }
    if (o_.world) o_.world->sum_in_rank_order(std::span<double>(batch_sums));  // one rank's value per element: exact
    double total = 0;
    for (double v : batch_sums) total += v;
    model_.set_training(true);
    return total / static_cast<double>(count);
}

fs::path Trainer::save_checkpoint() {
    if (!o_.save) throw ValueError("save_checkpoint: the run has no save folder");
    const fs::path to = run_folder(*o_.save, state_.step);
    // Sharded, every rank writes its file into rank 0's partial folder, between two barriers.
    const bool sharded = !owners_.empty();
    const std::string own_file = sharded ? shard_file(rank_, ranks_) : optimiser_file;
    if (rank_ != 0) {
        if (sharded) {
            o_.world->barrier();  // rank 0 has made the partial folder
            optimiser_->save_state(partial_folder(to) / own_file);
            o_.world->barrier();
        }
        return to;
    }
    if (o_.dropout) state_.generators = {{"dropout", o_.dropout->state()}};
    write_folder_atomically(to, [&](const fs::path& partial) {
        o_.save_model(partial);
        optimiser_->save_state(partial / own_file);
        if (sharded) {
            o_.world->barrier();
            o_.world->barrier();  // every rank's file written
        }
        RunState saved = state_;
        std::vector<fs::path> files;
        for (const fs::directory_entry& e : fs::directory_iterator(partial))
            if (e.is_regular_file()) files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const fs::path& f : files) saved.files.emplace_back(f.filename().string(), file_digest(f));
        save_run_state(saved, partial / run_state_file);  // last: it marks the folder complete
    });
    if (o_.keep > 0) keep_latest(*o_.save, o_.keep);
    return to;
}

void Trainer::gather_parameters() {
    std::vector<Tensor*> values;
    std::vector<std::size_t> roots;
    const std::vector<Param*> params = model_.parameters();
    for (std::size_t i = 0; i < params.size(); ++i)
        if (!params[i]->frozen) {
            values.push_back(&params[i]->value);
            roots.push_back(owners_[i]);
        }
    o_.world->broadcast_from(values, roots);
}

RunSummary Trainer::run() {
    const std::size_t micro_batches = o_.accumulate * ranks_;  // of a step, over all ranks
    const std::uint64_t step_tokens = o_.batch * micro_batches * data_.tokens_per_example();
    MicroBatches micro(model_.parameters());
    // Data parallel: gradients summed across ranks in buckets, during backward unless asked otherwise.
    std::optional<dist::GradientReducer> reducer;
    if (ranks_ > 1) reducer.emplace(*o_.world, model_.parameters(), o_.bucket_bytes, owners_);
    const GradientWatch sum_during_backward{
        .final = [&](std::size_t i, Tensor* g) { reducer->ready(i, g); },
        .final_except_rows = [&](std::size_t i, Tensor* g, std::span<const std::int64_t> rows) { reducer->ready_except_rows(i, g, rows); },
        .progress = [&] { reducer->progress(); }};
    Stream stream(data_, o_.seed);
    // A signal reaches the ranks at different steps: they stop at the same one, the first after any got it.
    auto stop_signal = [&]() -> int {
        const int here = o_.stop_requested ? o_.stop_requested() : 0;
        if (ranks_ == 1) return here;
        const float mine[] = {static_cast<float>(here)};
        const std::vector<float> all = o_.world->all_gather(mine);
        return static_cast<int>(*std::max_element(all.begin(), all.end()));
    };
    RunSummary summary{.first_step = state_.step, .last_step = state_.step};
    while (state_.step < o_.steps && !(summary.stopped_by = stop_signal())) {
        const auto start = Clock::now();
        const float lr = o_.schedule ? o_.schedule(state_.step) : o_.adamw.lr;
        optimiser_->set_learning_rate(lr);
        const std::int64_t step = state_.step + 1;
        memory::PeakScope peak;
        std::optional<Autocast> autocast(std::in_place, o_.precision);  // forward and backward; the update after
        std::size_t drawn = 0;  // of the step's micro-batches, all ranks', whose examples the stream has passed
        StepGradient g = micro.run(tape_, o_.accumulate, [&](std::size_t i) {
            const std::size_t j = rank_ * o_.accumulate + i;  // the step's micro-batch this is
            const auto data_start = Clock::now();
            for (; drawn < j; ++drawn) stream.skip(o_.batch, state_);
            ++drawn;
            if (o_.dropout)  // keyed (seed, step, micro-batch)
                *o_.dropout = Generator(o_.seed).fork(static_cast<std::uint64_t>(step)).fork(j);
            last_batch_ = stream.next(o_.batch, state_, {.seed = o_.seed, .step = static_cast<std::uint64_t>(step), .micro_batch = j});
            summary.data_seconds += since(data_start);
            return model_.training_loss(last_batch_);
        }, micro_batches, reducer && o_.sum_during_backward ? &sum_during_backward : nullptr);
        for (; drawn < micro_batches; ++drawn) stream.skip(o_.batch, state_);
        autocast.reset();
        std::optional<double> communication;
        if (ranks_ > 1) {  // G = G_0 + G_1 + … over the ranks' micro-batches, in order; the loss over all of them
            const auto communication_start = Clock::now();  // what backward did not hide
            if (!o_.sum_during_backward)
                for (std::size_t i = 0; i < g.grads.size(); ++i) reducer->ready(i, g.grads[i]);
            g.grads = reducer->finish();
            const std::vector<float> losses = o_.world->all_gather(g.losses);
            double sum = 0;
            for (float l : losses) sum += l;
            g.loss = static_cast<float>(sum / static_cast<double>(losses.size()));
            communication = since(communication_start);
        }
        const float max_norm = o_.clip > 0 ? o_.clip : std::numeric_limits<float>::infinity();
        float norm = 0;
        if (owners_.empty()) {
            norm = clip_grad_norm(std::span<Tensor* const>(g.grads), max_norm);
        } else {  // each rank has its share's sums: the parts of the others' come over, one rank's each (exact)
            std::vector<double> parts = squared_norms(g.grads);
            o_.world->sum_in_rank_order(std::span<double>(parts));
            norm = norm_from_parts(parts);
            clip_to(g.grads, norm, max_norm);
        }
        if (!std::isfinite(g.loss) || !std::isfinite(norm)) {
            const bool in_loss = !std::isfinite(g.loss);
            throw Diverged("step " + std::to_string(step) + ": the " + (in_loss ? "loss" : "gradient norm") + " is " +
                               not_finite_kind(in_loss ? g.loss : norm),
                           in_loss);
        }
        optimiser_->update(g.grads);
        if (!owners_.empty()) {  // every rank gets the parameters each updated
            const auto gather_start = Clock::now();
            gather_parameters();
            *communication += since(gather_start);
        }
        state_.step = step;
        state_.tokens += step_tokens;
        const double seconds = since(start);
        summary.seconds += seconds;
        summary.tokens += step_tokens;
        const auto bookkeeping = Clock::now();
        if (step == summary.first_step + 1) summary.first_loss = g.loss;
        summary.last_loss = g.loss;
        summary.last_step = step;

        StepReport report{.step = step,
                          .total = o_.steps,
                          .epoch = stream.epochs_done(state_),
                          .tokens = state_.tokens,
                          .loss = g.loss,
                          .lr = lr,
                          .grad_norm = norm,
                          .seconds = seconds,
                          .tokens_per_second = static_cast<double>(step_tokens) / seconds,
                          .peak_activation_bytes = peak.peak_above_baseline(),
                          .valid_loss = std::nullopt,
                          .communication_seconds = communication};
        if (o_.valid && ((o_.validate_every && step % o_.validate_every == 0) || step == o_.steps)) {
            summary.report_seconds += since(bookkeeping);  // validation is not the loop's overhead
            report.valid_loss = summary.valid_loss = validate();
            if (o_.on_step) o_.on_step(report);
        } else {
            if (o_.on_step) o_.on_step(report);
            summary.report_seconds += since(bookkeeping);
        }
        if (o_.save && o_.save_every && step % o_.save_every == 0 && step < o_.steps) save_checkpoint();
    }
    if (summary.stopped_by && o_.save) summary.saved = save_checkpoint();
    summary.optimiser_bytes = optimiser_bytes_;
    return summary;
}

}  // namespace remat::train
