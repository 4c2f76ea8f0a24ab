#include "app/panels/training_panel.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "app/panels/panel.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/labelled.hpp"
#include "app/widgets/line_chart.hpp"
#include "app/widgets/wording.hpp"
#include "core/model/error.hpp"
#include "core/training/pair_tasks.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

namespace {

constexpr const char* kPracticalLabel =
    "Practical (§7–8): minibatches, mean loss, Adam, warmup + cosine, clipping";


// The session configuration the trainer follows: everything but the vocabulary, which a task
// may replace with its own characters.
std::string config_key(ModelConfig c) {
  c.vocab.clear();
  return to_json(c);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The built-in tasks for an architecture: pairs (z, x) when it reads a context, else sequences.
const std::vector<std::string>& tasks_for(const Architecture& a) { return a.has_context() ? pair_task_names() : task_names(); }

// The shade of a padded position.
ImU32 padding_color(bool dark) { return dark ? IM_COL32(70, 70, 78, 255) : IM_COL32(205, 205, 212, 255); }

// A padded cell of side w at p: shaded and hatched.
void padded_cell(ImDrawList* dl, ImVec2 p, float w, ImU32 bg, ImU32 hatch) {
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + w), bg);
  for (float d = w * 0.33f; d < 2 * w; d += w * 0.33f)
    dl->AddLine(ImVec2(p.x + std::max(0.0f, d - w), p.y + std::min(d, w)), ImVec2(p.x + std::min(d, w), p.y + std::max(0.0f, d - w)),
                hatch);
}

// The width of the "b = 8" labels left of the minibatch's rows and of the mask (in the current font).
float row_label_width() { return ImGui::CalcTextSize("b = 00").x + ImGui::GetFontSize() * 0.4f; }

}  // namespace

bool TrainingPanel::configure(App& app, std::string& error) {
  try {
    // The recipe's model, or the session model's architecture and sizes (a fresh θ either way:
    // training starts from scratch).
    const Architecture& arch = app.session.arch();
    const Recipe classroom = classroom_recipe(arch.name());
    ModelConfig c = recipe_ ? classroom.config : app.session.model().config;
    arch_ = &arch;
    config_key_ = config_key(app.session.model().config);
    TaskOptions to;
    to.seed = static_cast<uint64_t>(seed_);
    to.max_chars = c.l_max - 2;
    Dataset d;
    const auto& names = tasks_for(arch);
    if (std::find(names.begin(), names.end(), task_) != names.end())
      d = arch.has_context() ? make_pair_task(task_, to) : make_task(task_, to);
    else if (arch.has_context()) d = pairs_dataset(task_, to.max_chars);
    else d = text_dataset(task_, to);
    if (!missing_characters(d.vocab, c).empty()) c.vocab = d.vocab;
    Model m = Model::initialised(c, static_cast<uint64_t>(seed_));
    train_tok_ = make_tokenizer(c);
    train_config_ = c;
    minibatch_ = {};
    minibatch_step_ = -1;
    TrainOptions o;
    if (recipe_) {
      o = classroom.options;  // warmup, cosine, threads
    } else {
      o.warmup = 100;
      o.steps = 5000;
    }
    o.mode = mode_;
    o.lr = lr_;
    o.batch = batch_;
    o.epochs = 3;
    o.eval_sequences = 256;
    o.data_seed = static_cast<uint64_t>(seed_);
    o.p_mask = p_mask_;
    o.bert_80_10_10 = bert_80_10_10_;
    preview_ = d.preview(8);
    n_train_ = d.train.size();
    n_val_ = d.val.size();
    description_ = d.description;
    task_label_ = std::find(names.begin(), names.end(), task_) != names.end() ? task_ : d.name;
    verb_ = accuracy_verb(c, d.name);
    runner_.eval_every = recipe_ ? static_cast<int>(classroom.eval_every) : eval_every_;
    runner_.until_accuracy = recipe_ ? classroom.until_accuracy : 0.0;
    runner_.configure(std::move(m), std::move(d), o);
    configured_ = true;
    error_.clear();
    return true;
  } catch (const std::exception& e) {
    error = error_ = e.what();
    return false;
  }
}

bool TrainingPanel::ensure(App& app) {
  if (configured_ && configured_for(app)) return true;
  const auto& names = tasks_for(app.session.arch());
  if (arch_ != &app.session.arch() && recipe_) {
    task_ = classroom_recipe(app.session.arch().name()).task;
    p_mask_ = static_cast<float>(classroom_recipe(app.session.arch().name()).options.p_mask);
  }
  else if (arch_ != &app.session.arch() && std::find(names.begin(), names.end(), task_) == names.end())
    task_ = names.front();
  std::string err;
  return configure(app, err);
}

void TrainingPanel::drop_if_stale(const App& app) {
  if (!configured_ || checked_model_.lock() == app.session.model_ptr()) return;
  checked_model_ = app.session.model_ptr();
  if (!configured_for(app)) release();
}

bool TrainingPanel::configured_for(const App& app) const {
  return arch_ == &app.session.arch() && config_key_ == config_key(app.session.model().config);
}

void TrainingPanel::release() {
  runner_.release();
  snap_ = {};
  configured_ = false;
}

bool TrainingPanel::set_task(App& app, const std::string& name, std::string& error) {
  const std::string old = task_;
  task_ = name;
  if (configure(app, error)) return true;
  task_ = old;
  return false;
}

void TrainingPanel::set_mode(App& app, TrainMode m) {
  if (!ensure(app)) return;
  if (m == mode_) return;
  mode_ = m;
  lr_ = default_lr(app, m);
  runner_.set_mode(m);
  runner_.set_lr(lr_);
}

float TrainingPanel::default_lr(App& app, TrainMode m) const {
  if (m == TrainMode::Paper) return 1e-2f;
  return recipe_ ? static_cast<float>(classroom_recipe(app.session.arch().name()).options.lr) : 3e-3f;
}

void TrainingPanel::step_sync(App& app, int n) {
  if (!ensure(app)) return;
  runner_.step_sync(n);
}

const TrainSnapshot& TrainingPanel::snapshot() const {
  runner_.snapshot(snap_);
  return snap_;
}

bool TrainingPanel::use_model(App& app, std::string& error) {
  if (!ensure(app)) return error = error_, false;
  std::unique_ptr<Model> m;
  runner_.copy_state(&m, nullptr, nullptr, nullptr, nullptr);
  if (!m) return error = "no model to use", false;
  const int64_t step = snapshot().step;
  app.session.set_model(std::move(*m), "trained: " + task_label_ + " step " + std::to_string(step));
  config_key_ = config_key(app.session.model().config);  // the trained model's own sizes: no retraining
  app.ui.viewed_event = SIZE_MAX;
  app.notify("The stepper now shows the model trained on " + task_label_ + " for " + std::to_string(step) +
             " updates");
  return true;
}

bool TrainingPanel::play(App& app, std::string& error) {
  if (!ensure(app)) return error = error_, false;
  if (snapshot().finished) return error = "training has finished its schedule: reset (seed) or pick a task", false;
  runner_.play();
  return true;
}

bool TrainingPanel::set_eta(App& app, double eta, std::string& error) {
  if (!ensure(app)) return error = error_, false;
  if (!(eta >= 1e-5 && eta <= 1)) return error = "eta is a learning rate from 1e-5 to 1 (the slider's range)", false;
  set_rates(static_cast<float>(eta), batch_, seed_);
  return true;
}

bool TrainingPanel::trace_update(App& app, std::string& error) {
  if (!ensure(app)) return error = error_, false;
  runner_.pause();
  std::unique_ptr<Model> m;
  Dataset d;
  TrainOptions o;
  int i = 1, n = 1;
  if (!runner_.copy_state(&m, &d, &o, &i, &n)) return error = "no trainer", false;
  try {
    const Architecture& arch = architecture(m->config);
    const std::vector<Example> data = arch.examples(d.train, m->config);
    std::unique_ptr<PaperTraining> alg = arch.paper_training(static_cast<int>(data.size()), std::max(1, o.epochs));
    if (i > alg->N_epochs() || n > alg->N_data()) i = n = 1;
    alg->seek(i, n);
    // Token labels need the trained vocabulary, the views the trained sizes (the classroom recipe's).
    if (to_json(m->config) != to_json(app.session.model().config)) {
      app.session.set_model(*m, "training: " + task_label_ + " (before the traced update)");
      config_key_ = config_key(app.session.model().config);  // the trained model's own sizes: no retraining
    }
    // One step of the paper's training algorithm on the copy m, forward and backward (the update
    // line's backward frames), traced like the forward pass: on a worker thread for a big model.
    struct Step {
      std::unique_ptr<PaperTraining> alg;
      std::vector<Example> data;
      std::shared_ptr<Model> model;
      TrainOptions o;
      std::unique_ptr<ModelGradient> g;
      float eta = 0;
      PaperTraining::Update u;
      std::string error;
      bool async = false;  // traced on a worker thread: its failure is told when it ends
    };
    auto st = std::make_shared<Step>();
    st->g = arch.gradient(m->table);
    st->alg = std::move(alg);
    st->data = data;
    st->model = std::shared_ptr<Model>(std::move(m));
    st->o = o;
    st->eta = mode_ == TrainMode::Paper ? lr_ : default_lr(app, TrainMode::Paper);
    st->async = st->model->table.total() > app.session.async_min_params;
    const std::string name = "Algorithm " + std::to_string(st->alg->algorithm());
    const std::string label =
        name + ", one update (i=" + std::to_string(i) + ", n=" + std::to_string(n) + ") on " + task_label_;
    auto step = [st](Tracer& tr) {
      try {
        Rng rng(st->o.data_seed);
        st->u = st->alg->step(st->data, *st->model, st->eta, st->o, *st->g, rng, &tr);
      } catch (const std::exception& e) {
        st->error = e.what();
        tr.trace().events.clear();  // nothing to show: the shown trace stays
      }
    };
    auto shown = [&app, st, name, n] {
      if (!st->error.empty()) {
        if (st->async) app.notify("The training update could not be traced: " + st->error);
        return;
      }
      app.ui.viewed_event = SIZE_MAX;
      app.ui.show.pseudocode = true;
      app.notify("Traced one update of " + name + " on a copy of the model (example " + std::to_string(n) +
                 ", loss " + fmt("%.4g", st->u.loss) + "); the training itself is unchanged");
    };
    app.session.trace_training(step, label, st->model, shown);  // the model kept while its trace is shown
    if (!st->error.empty()) return error = st->error, false;  // traced at once, and failed
  } catch (const std::exception& e) {
    return error = e.what(), false;
  }
  return true;
}

void TrainingPanel::draw_padding(App& app) {
  if (mode_ == TrainMode::Paper) {
    ImGui::TextDisabled("The paper's mode takes one sequence at a time: nothing is padded.");
    return;
  }
  if (snap_.step != minibatch_step_) {
    minibatch_ = runner_.last_minibatch();
    minibatch_step_ = snap_.step;
  }
  const Batch& b = minibatch_;
  if (b.B == 0 || !train_tok_) {
    ImGui::TextDisabled("(after the first update)");
    return;
  }
  ImGui::TextWrapped("The last minibatch: B = %d sequences padded to ℓ = %d, %d real tokens and %d padded; %d loss "
                     "terms. No loss on padding: a padded position has no target, and its key is masked for every "
                     "query (practical training, not in the paper).",
                     b.B, b.l, b.real_tokens(), b.B * b.l - b.real_tokens(), b.n_targets());
  draw_minibatch_rows(app, b);
  draw_padded_mask(app, b);
}

// The first 8 sequences of minibatch b, a cell per position: its token, hatched when padded,
// underlined when it has a loss term.
void TrainingPanel::draw_minibatch_rows(const App& app, const Batch& b) const {
  const float F = ImGui::GetFontSize();
  const bool dark = app.settings.dark;
  const int l = b.l;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 pad_bg = padding_color(dark);
  const ImU32 accent = accent_color(dark);
  const float label_w = row_label_width();
  const float cell = std::clamp((ImGui::GetContentRegionAvail().x - label_w) / static_cast<float>(l), F * 0.7f, F * 1.3f);
  const int rows = std::min(b.B, 8);
  ImGui::PushFont(app.fonts.mono);
  for (int n = 0; n < rows; ++n) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddText(ImVec2(p.x, p.y + (cell - F) * 0.5f), faint, ("b = " + std::to_string(n + 1)).c_str());
    for (int t = 0; t < l; ++t) {
      const ImVec2 c(p.x + label_w + static_cast<float>(t) * cell, p.y);
      const size_t k = static_cast<size_t>(n) * l + t;
      if (t >= b.lengths[n]) {
        padded_cell(dl, c, cell - 1, pad_bg, faint);
        continue;
      }
      dl->AddRect(c, ImVec2(c.x + cell - 1, c.y + cell - 1), faint);
      // A character in the cell; bos_token, eos_token and mask_token as "bos", "eos", "msk" in the small font.
      const int id = b.tokens[k];
      const bool special = id == train_tok_->bos_token() || id == train_tok_->eos_token() || id == train_tok_->mask_token();
      const std::string tok = !special ? token_label(*train_tok_, id)
                              : id == train_tok_->bos_token() ? "bos" : id == train_tok_->eos_token() ? "eos" : "msk";
      ImFont* font = special ? app.fonts.small : app.fonts.mono;
      const ImVec2 ts = font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, tok.c_str());
      dl->AddText(font, font->FontSize, ImVec2(c.x + (cell - ts.x) * 0.5f, c.y + (cell - ts.y) * 0.5f), text, tok.c_str());
      if (b.targets[k] != 0) dl->AddLine(ImVec2(c.x + 2, c.y + cell - 3), ImVec2(c.x + cell - 3, c.y + cell - 3), accent, 2.0f);
    }
    ImGui::Dummy(ImVec2(label_w + cell * static_cast<float>(l), cell));
    if (ImGui::IsItemHovered())
      item_tooltip("sequence " + std::to_string(n + 1) + ": ℓ_n = " + std::to_string(b.lengths[n]) + " real tokens, " +
                   std::to_string(l - b.lengths[n]) + " padded");
  }
  ImGui::PopFont();
  if (b.B > rows) ImGui::TextDisabled("… and %d more sequences", b.B - rows);
  ImGui::TextDisabled("hatched: padding · underlined: a position with a loss term");
}

// One sequence's attention mask: the architecture's mask, and no padded key for any query.
void TrainingPanel::draw_padded_mask(const App& app, const Batch& b) {
  const float F = ImGui::GetFontSize();
  const bool dark = app.settings.dark;
  const int l = b.l;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 pad_bg = padding_color(dark);
  const ImU32 accent = accent_color(dark);
  const float label_w = row_label_width();
  ImGui::SetNextItemWidth(F * 8);
  ImGui::SliderInt("sequence b", &batch_seq_, 1, b.B);
  batch_seq_ = std::clamp(batch_seq_, 1, b.B);
  const int len = b.lengths[batch_seq_ - 1];
  const bool causal = app.session.arch().output() != OutputKind::FillIn;
  // A prefix-LM (GPT, a variant) is bidirectional over this sequence's own prefix x[1:p].
  const bool prefix = causal && train_config_.mask == MaskKind::Prefix;
  const auto x0 = b.tokens.begin() + static_cast<long>(batch_seq_ - 1) * l;
  const int p_sep = prefix ? prefix_position(Tokens(x0, x0 + len), train_config_) : 0;
  Mask mask = windowed(!causal ? bidirectional_mask(l, l) : prefix ? prefix_mask(l, p_sep) : unidirectional_mask(l, l),
                       train_config_.window);  // (ℓ, ℓ), sliding-window variant: ∧ |t_z − t_x| ≤ w
  mask.bottomRows(l - len).setZero();  // keys t_z > ℓ_b are padding
  const std::string kind = !causal  ? "The bidirectional"
                           : prefix ? "The prefix-LM (a variant, seed 004; p = " + std::to_string(p_sep) + ")"
                                    : "The causal";
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s self-attention Mask[t_z, t_x] of sequence %d (ℓ_b = %d): rows t_z are keys, columns t_x "
                      "queries",
                      kind.c_str(), batch_seq_, len);
  ImGui::PopTextWrapPos();
  const float mc = std::clamp((ImGui::GetContentRegionAvail().x - label_w) / static_cast<float>(l), 4.0f, F * 0.55f);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  for (int tz = 0; tz < l; ++tz)
    for (int tx = 0; tx < l; ++tx) {
      const ImVec2 c(p.x + label_w + static_cast<float>(tx) * mc, p.y + static_cast<float>(tz) * mc);
      if (tz >= len && mask(tz, tx) == 0) padded_cell(dl, c, mc - 1, pad_bg, faint);
      else dl->AddRectFilled(c, ImVec2(c.x + mc - 1, c.y + mc - 1), mask(tz, tx) ? accent : pad_bg);
    }
  dl->AddText(ImVec2(p.x, p.y), faint, "t_z ↓");
  if (len < l)
    dl->AddText(ImVec2(p.x, p.y + static_cast<float>(len) * mc), faint, "pad");
  ImGui::Dummy(ImVec2(label_w + mc * static_cast<float>(l), mc * static_cast<float>(l)));
  std::string legend = "filled: 1 (may attend) · ";
  if (causal) legend += prefix ? "plain: 0 (causal after the prefix) · " : "plain: 0 (the causal mask) · ";
  legend += "hatched: a padded key, masked for every query";
  if (app.session.arch().has_context())
    legend += "; the contexts z are padded too, their padded keys masked in the encoder and in cross-attention";
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", legend.c_str());
  ImGui::PopTextWrapPos();
}

void TrainingPanel::draw_accuracy(const TrainSnapshot& s, ImVec2 size, bool dark) {
  std::vector<LossPoint> pts;  // (step, fraction) for the chart
  for (const AccuracyPoint& a : s.accuracy) pts.push_back({a.step, static_cast<float>(a.accuracy.fraction())});
  ChartRange r;
  r.x0 = 1;
  r.x1 = static_cast<double>(std::max<int64_t>(s.step, 2));
  r.y0 = 0;
  r.y1 = 1;
  r.target = recipe("classroom").until_accuracy;  // the accuracy the classroom recipe trains to (95%)
  r.target_label = fmt("%.0f%%", 100 * r.target);
  r.empty = "greedy validation accuracy: at the first evaluation (tasks with \"=\" and pair tasks)";
  const ImU32 c = dark ? IM_COL32(110, 210, 120, 255) : IM_COL32(20, 140, 50, 255);
  accuracy_chart_ = line_chart("##accuracy", {{&pts, c, "accuracy"}}, size, false, 0.0f, dark, r);
}

void TrainingPanel::draw_reached(const TrainSnapshot& s) const {
  const std::string what = verb_ == "translates" ? "validation pairs" : "validation sequences";
  if (s.reached.step > 0) {
    const Accuracy& a = s.reached.accuracy;
    ImGui::TextColored(ImVec4(0.2f, 0.75f, 0.3f, 1), "%s %.0f%% of %s (%d of %d) after %s, %.1f s",
                       verb_.c_str(), 100 * a.fraction(), what.c_str(), a.correct, a.total,
                       counted(s.reached.step, "update").c_str(), s.reached_seconds);
  } else if (!s.accuracy.empty()) {
    const AccuracyPoint& p = s.accuracy.back();
    ImGui::Text("%s %.1f%% of %s (%d of %d) at update %lld, %.1f s", verb_.c_str(), 100 * p.accuracy.fraction(),
                what.c_str(), p.accuracy.correct, p.accuracy.total, static_cast<long long>(p.step), s.seconds);
  }
}

void TrainingPanel::draw(App& app) {
  drawn_frame_ = app.ui.frame_index;
  ensure(app);
  const TrainSnapshot& s = snapshot();

  draw_task_row(app);
  draw_recipe(app);
  draw_masking(app);
  draw_data(app);
  ImGui::Separator();
  const std::unique_ptr<PaperTraining> paper = app.session.arch().paper_training(1, 1);  // the algorithm's number and update line
  draw_mode_radios(app, *paper);
  draw_optimiser_controls();
  ImGui::Separator();
  draw_play_row(s);
  draw_charts(app, s);
  if (ImGui::CollapsingHeader("Padding of the minibatch", ImGuiTreeNodeFlags_DefaultOpen)) draw_padding(app);
  if (ImGui::CollapsingHeader("Gradient norm per tensor (last update)", ImGuiTreeNodeFlags_DefaultOpen))
    draw_gradient_norms(app, s);
  ImGui::Separator();
  draw_use_and_trace(app, *paper);
  if (app.session.run_kind() == RunKind::Training) draw_traced_update(app, *paper);
}

// The task: a built-in one from the combo, or a UTF-8 text file loaded by its path.
void TrainingPanel::draw_task_row(App& app) {
  const float fs = ImGui::GetFontSize();
  const auto& names = tasks_for(app.session.arch());
  const bool is_file = std::find(names.begin(), names.end(), task_) == names.end();
  ImGui::SetNextItemWidth(fs * 9);
  if (ImGui::BeginCombo("Task", is_file ? "text file" : task_.c_str())) {
    for (const auto& nm : names)
      if (ImGui::Selectable(nm.c_str(), nm == task_)) {
        std::string err;
        if (!set_task(app, nm, err)) app.notify(err, true);
      }
    ImGui::EndCombo();
  }
  const float path_w = fs * 14;
  same_line_if_fits(path_w + ImGui::GetStyle().ItemSpacing.x + button_width("Load text"));
  ImGui::SetNextItemWidth(std::min(path_w, ImGui::GetContentRegionAvail().x));  // on a line of its own: at most its width
  ImGui::InputTextWithHint("##path", "path of a UTF-8 text file", path_, sizeof path_);
  same_line_if_fits(button_width("Load text"));
  ImGui::BeginDisabled(path_[0] == 0);
  if (ImGui::Button("Load text")) {
    std::string err;
    if (!set_task(app, path_, err)) app.notify("Could not load " + std::string(path_) + ": " + err, true);
  }
  ImGui::EndDisabled();
}

// "Classroom recipe" and the model and settings it (or the open model) gives.
void TrainingPanel::draw_recipe(App& app) {
  const Architecture& arch = app.session.arch();
  if (wrapped_checkbox("Classroom recipe", &recipe_)) {
    const Recipe r = classroom_recipe(arch.name());
    batch_ = recipe_ ? r.options.batch : 16;
    p_mask_ = static_cast<float>(recipe_ ? r.options.p_mask : TrainOptions{}.p_mask);
    lr_ = default_lr(app, mode_);
    std::string err;
    if (!configure(app, err)) app.notify(err, true);
  }
  item_tooltip("docs/training.md: a small model and settings that reach 95% greedy validation accuracy in about 2000 "
               "updates (sorting: about 6 s on two idle cores); Play pauses there. Untick to train the open model's sizes.");
  ImGui::PushTextWrapPos(0.0f);
  if (recipe_) {
    const Recipe r = classroom_recipe(arch.name());
    const ModelConfig& c = r.config;
    ImGui::TextDisabled("A fresh %s (Algorithm %d): L = %d, H = %d, d_e = %d, d_mlp = %d; warmup %lld, %d threads; "
                        "stops at %.0f%% greedy validation accuracy.",
                        arch.title().c_str(), arch.training_algorithm(), arch.has_context() ? c.L_enc : c.L, c.H,
                        c.d_e, c.d_mlp, static_cast<long long>(r.options.warmup), r.options.threads,
                        100 * r.until_accuracy);
  } else {
    ImGui::TextDisabled("Trains a fresh %s (Algorithm %d) with the open model's sizes.", arch.title().c_str(),
                        arch.training_algorithm());
  }
  ImGui::PopTextWrapPos();
}

// Algorithm 12's masking, for models that fill in mask_token: p_mask and BERT's 80/10/10 rule.
void TrainingPanel::draw_masking(App& app) {
  if (app.session.arch().output() != OutputKind::FillIn) return;
  bool changed = false;
  changed |= ImGui::SliderFloat(fitted_label("p_mask", ImGui::GetFontSize() * 9).c_str(), &p_mask_, 0.01f, 0.9f, "%.2f");
  item_tooltip(recipe_ && mode_ == TrainMode::Practical && classroom_recipe(app.session.arch().name()).options.mask_answer
                   ? "The classroom recipe, not the paper's rule: each letter of the answer (after \"=\") becomes "
                     "mask_token with probability p_mask, the question never; the fill-in accuracy asks for the "
                     "answer's letters (docs/training.md)."
                   : "Algorithm 12: each position of x becomes mask_token with probability p_mask.");
  const char* bert_rule = "80/10/10 (BERT's rule, not the paper's)";
  same_line_if_fits(toggle_width(bert_rule));
  changed |= wrapped_checkbox(bert_rule, &bert_80_10_10_);
  item_tooltip("Of the chosen positions, 80% become mask_token, 10% a random token and 10% stay as they are "
               "(Devlin et al.); the paper's Algorithm 12 masks them all.");
  if (changed) {
    std::string err;
    if (!configure(app, err)) app.notify(err, true);
  }
}

// The task's data: its description, the split sizes, a few training sequences, and any error.
void TrainingPanel::draw_data(const App& app) const {
  if (!description_.empty()) ImGui::TextWrapped("%s", description_.c_str());
  ImGui::Text("train: %zu sequences · validation: %zu", n_train_, n_val_);
  if (!preview_.empty()) {
    ImGui::PushFont(app.fonts.mono);
    std::string joined;
    for (size_t k = 0; k < preview_.size(); ++k) joined += (k ? "   " : "") + preview_[k];
    ImGui::TextWrapped("%s", joined.c_str());
    ImGui::PopFont();
  }
  if (!error_.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "%s", error_.c_str());
}

// The two modes: the paper's training algorithm as printed, or the practical recipe of §7–8.
void TrainingPanel::draw_mode_radios(App& app, const PaperTraining& paper) {
  const int mode = mode_ == TrainMode::Paper ? 0 : 1;
  const std::string paper_label = "Paper: Algorithm " + std::to_string(paper.algorithm()) +
                                  " as printed — one example at a time, summed loss, plain SGD";
  if (wrapped_radio("##paper", paper_label, mode == 0)) set_mode(app, TrainMode::Paper);
  if (wrapped_radio("##practical", kPracticalLabel, mode == 1)) set_mode(app, TrainMode::Practical);
}

// η, the batch size (practical mode only), the seed, and a reset to the seed's initialisation.
void TrainingPanel::draw_optimiser_controls() {
  const float fs = ImGui::GetFontSize();
  if (ImGui::SliderFloat(fitted_label("η (learning rate)", fs * 9).c_str(), &lr_, 1e-5f, 1.0f, "%.2e", ImGuiSliderFlags_Logarithmic))
    runner_.set_lr(lr_);
  item_tooltip("Takes effect at the next update, without a reset.");
  same_line_if_fits(field_width("batch", fs * 6));
  ImGui::BeginDisabled(mode_ == TrainMode::Paper);
  if (ImGui::SliderInt(fitted_label("batch", fs * 6).c_str(), &batch_, 1, 128)) runner_.set_batch(batch_);
  ImGui::EndDisabled();
  ImGui::InputInt(fitted_label("seed", fs * 6).c_str(), &seed_);
  same_line_if_fits(button_width("Reset to the same initialisation (seed)"));
  if (ImGui::Button("Reset to the same initialisation (seed)")) runner_.reset(static_cast<uint64_t>(seed_));
}

// ▶ Play / ‖ Pause, one update, the trainer's progress, and why it stopped.
void TrainingPanel::draw_play_row(const TrainSnapshot& s) {
  if (!s.playing) {
    ImGui::BeginDisabled(s.finished);
    if (ImGui::Button("▶ Play")) runner_.play();
    ImGui::EndDisabled();
  } else if (ImGui::Button("‖ Pause")) {
    runner_.pause();
  }
  ImGui::SameLine();
  if (ImGui::Button("One update")) runner_.step_sync(1);
  flow_figures({"step " + std::to_string(s.step), "η now " + fmt("%.3g", s.lr),
                fmt("%.0f tokens/s", s.tokens_per_s), fmt("loss %.4f", s.last_loss)});
  if (s.bad_step > 0)
    ImGui::TextColored(ImVec4(1, 0.3f, 0.3f, 1), "The loss was not finite at step %lld: training paused (θ unchanged). "
                                                  "Lower η or reset.",
                       static_cast<long long>(s.bad_step));
  if (!s.error.empty()) ImGui::TextColored(ImVec4(1, 0.3f, 0.3f, 1), "%s", s.error.c_str());
  if (s.finished) ImGui::TextDisabled("Training has finished its schedule.");
}

// The loss curves (log y, smoothing) beside the greedy validation accuracy, and the accuracy reached.
void TrainingPanel::draw_charts(const App& app, const TrainSnapshot& s) {
  const float fs = ImGui::GetFontSize();
  const bool dark = app.settings.dark;
  ImGui::Checkbox("log y", &log_y_);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 8);
  ImGui::SliderFloat("smoothing (EMA)", &ema_, 0.0f, 0.99f, "%.2f");
  const float avail = ImGui::GetContentRegionAvail().x;
  const ImU32 train_c = dark ? IM_COL32(90, 170, 255, 255) : IM_COL32(20, 100, 210, 255);
  const ImU32 val_c = dark ? IM_COL32(255, 160, 60, 255) : IM_COL32(220, 110, 0, 255);
  // Both charts share the x axis: update 1 to the last one.
  ChartRange steps;
  steps.x0 = 1;
  steps.x1 = static_cast<double>(std::max<int64_t>(s.step, 2));
  const float loss_w = std::max(avail * 0.6f, fs * 10);
  line_chart("##loss", {{&s.train, train_c, "train"}, {&s.val, val_c, "validation"}}, ImVec2(loss_w, fs * 13), log_y_,
             ema_, dark, steps);
  ImGui::SameLine();
  draw_accuracy(s, ImVec2(std::max(avail - loss_w - ImGui::GetStyle().ItemSpacing.x, fs * 8), fs * 13), dark);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("left: mean −log P per predicted token; right: greedy validation accuracy (docs/training.md), "
                      "dashed at the recipe's %.0f%%; validation every %s",
                      100 * recipe("classroom").until_accuracy, counted(runner_.eval_every.load(), "update").c_str());
  draw_reached(s);
  ImGui::PopTextWrapPos();
}

// A bar per tensor of the trained model: ‖∇‖ of the last update, scaled to the largest.
void TrainingPanel::draw_gradient_norms(const App& app, const TrainSnapshot& s) const {
  const ParamTable table(train_config_);  // the trained model's table
  const auto& entries = table.entries();
  double mx = 0;
  for (double v : s.grad_norms) mx = std::max(mx, v);
  if (s.grad_norms.size() != entries.size()) {
    ImGui::TextDisabled("(after the first update)");
    return;
  }
  // Columns as wide as their widest text (symbol, name), then the bar, then the number.
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  float sym_w = 0, name_w = 0;
  for (const auto& e : entries) {
    sym_w = std::max(sym_w, ImGui::CalcTextSize(e.symbol.c_str()).x);
    name_w = std::max(name_w, ImGui::CalcTextSize(e.name.c_str()).x);
  }
  const float label_w = sym_w + name_w + 2 * gap, num_w = ImGui::CalcTextSize("0.000e-00").x + gap;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (size_t k = 0; k < entries.size(); ++k) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    const float w = std::max(10.0f, ImGui::GetContentRegionAvail().x - label_w - num_w);
    ImGui::TextUnformatted(entries[k].symbol.c_str());
    item_tooltip(entries[k].name);
    ImGui::SameLine(sym_w + gap + ImGui::GetStyle().WindowPadding.x);
    ImGui::TextDisabled("%s", entries[k].name.c_str());
    const float len = mx > 0 ? static_cast<float>(s.grad_norms[k] / mx) * w : 0.0f;
    dl->AddRectFilled(ImVec2(p.x + label_w, p.y + h * 0.15f), ImVec2(p.x + label_w + std::max(len, 1.0f), p.y + h * 0.85f),
                      accent_color(app.settings.dark));
    dl->AddText(ImVec2(p.x + label_w + w + ImGui::GetFontSize() * 0.3f, p.y), ImGui::GetColorU32(ImGuiCol_Text),
                fmt("%.3g", s.grad_norms[k]).c_str());
  }
}

// "Use this model" and "Trace one update of Algorithm N (paper mode)".
void TrainingPanel::draw_use_and_trace(App& app, const PaperTraining& paper) {
  if (ImGui::Button("Use this model")) {
    std::string err;
    if (!use_model(app, err)) app.notify(err, true);
  }
  item_tooltip("Copies the model being trained into the stepper, the attention and the other views.");
  const std::string alg = "Algorithm " + std::to_string(paper.algorithm());
  const std::string trace_label = "Trace one update of " + alg + " (paper mode)";
  same_line_if_fits(button_width(trace_label.c_str()));
  if (ImGui::Button(trace_label.c_str())) {
    std::string err;
    if (!trace_update(app, err)) app.notify(err, true);
  }
  item_tooltip("Pauses, then runs one update of " + alg + " with the tracer on a copy of the model: it steps into " +
               "Algorithm " + std::to_string(app.session.arch().forward_algorithm()) + ", shows the loss terms, then line " +
               std::to_string(paper.update_line()) + ": ∇loss(θ) and θ before and after. Step into line " +
               std::to_string(paper.update_line()) + " to run the backward pass line by line (Stepformer's backward " +
               "listings, not in the paper).");
}

// While the stepper shows a traced update: a parameter, and buttons to its ∇, before and after at the update line.
void TrainingPanel::draw_traced_update(App& app, const PaperTraining& paper) {
  ImGui::TextDisabled("Shown in the stepper: %s", app.session.trace_label().c_str());
  const ParamTable table(app.session.model().config);
  const auto& entries = table.entries();
  param_ = std::clamp(param_, 0, static_cast<int>(entries.size()) - 1);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  if (ImGui::BeginCombo("parameter", entries[param_].name.c_str())) {
    for (int k = 0; k < static_cast<int>(entries.size()); ++k)
      if (ImGui::Selectable((entries[k].name + "   " + entries[k].symbol).c_str(), k == param_)) param_ = k;
    ImGui::EndCombo();
  }
  const std::string alg = "Algorithm " + std::to_string(paper.algorithm());
  const std::string U = std::to_string(paper.update_line());
  const std::pair<const char*, UpdateValue> buttons[] = {
      {"∇", UpdateValue::Gradient}, {"before", UpdateValue::Before}, {"after", UpdateValue::After}};
  for (const auto& [what, which] : buttons) {
    ImGui::SameLine();
    const std::string value = update_value_name(entries[param_].name, which);
    if (ImGui::SmallButton(what)) {
      app.session.jump_to(paper.algorithm(), paper.update_line());
      app.ui.selected_value = value;
      app.ui.show.tensor = true;
    }
    item_tooltip("Line " + U + " of " + alg + ", \"" + value + "\" in the Tensor tab");
  }
}

}  // namespace sf
