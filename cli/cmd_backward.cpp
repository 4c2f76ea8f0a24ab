// stepformer-cli backward: loss(θ) of one sequence and its gradient ∇loss(θ), with the residual
// stream's gradient at every layer, written as float64 NumPy files for checking against another
// implementation (tests/reference/test_backward_command.py does, with torch autograd).
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/gradients/sequence_gradient.hpp"
#include "core/io/npy.hpp"
#include "core/model/error.hpp"

namespace sf::cli {

namespace {

// --masks 2,5: 1-based positions (their range is checked against x by masked_batch).
std::vector<int> parse_masks(const std::string& list) {
  std::vector<int> masks;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    masks.push_back(static_cast<int>(parse_int(list.substr(start, comma - start), "--masks", 1, 1'000'000)));
    if (comma == std::string::npos) return masks;
    start = comma + 1;
  }
}

// The batch of one whose loss the command differentiates: BERT's x̃ with its masked positions, or
// x (and z) with next-token targets.
Batch loss_batch(const Args& args, const ModelConfig& c, const Tokens& z, const Tokens& x) {
  const Architecture& arch = architecture(c);
  if (arch.output() != OutputKind::FillIn) {
    refuse_option(args, "masks",
                  "its loss (Algorithm " + std::to_string(arch.training_algorithm()) +
                      ") scores every next token x[t+1]; --masks is for a masked language model (BERT)");
    return next_token_batch(z, x);
  }
  if (!args.has("masks"))
    throw UsageError("a masked language model's loss (Algorithm 12) is over the masked positions: give --masks "
                     "POSITIONS, the 1-based positions of x to replace by mask_token, e.g. --masks 2,4");
  // The configuration's mask_token, as Algorithm 12's training draws it (its mask_id, or N_V − 2).
  if (c.mask_token() == 0)
    throw Error("this model has no mask_token (its configuration's mask_id is −1), so --masks cannot mask x: use "
                "a model that has one");
  try {
    return masked_batch(x, parse_masks(args.get("masks")), c.mask_token());
  } catch (const Error& e) {
    throw UsageError(std::string("--masks: ") + e.what());
  }
}

// A column-major (rows × cols) matrix stack (count of them, one after another) in C order.
std::vector<double> row_major(const double* data, int count, int rows, int cols) {
  std::vector<double> out(static_cast<size_t>(count) * rows * cols);
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        out[(static_cast<size_t>(k) * rows + i) * cols + j] = data[(static_cast<size_t>(k) * cols + j) * rows + i];
  return out;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// Writes DIR/NAME.npy and prints one line: its name, shape and Frobenius norm.
void write_array(const std::filesystem::path& dir, const std::string& name, const std::vector<int64_t>& shape,
                 const std::vector<double>& data) {
  write_npy((dir / (name + ".npy")).string(), shape, data);
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  std::cout << "  " << name << ".npy  (" << dims << (shape.size() == 1 ? ",)" : ")")
            << (shape.empty() ? "  = " : "  ‖·‖ = ") << norm(data) << "\n";
}

// grad_<PREFIX>_<l>.npy for l = 1 … L+1, each (d_e, ℓ) with tokens as columns.
void write_stream(const std::filesystem::path& dir, const std::string& prefix, const std::vector<Mat<double>>& dX) {
  for (size_t l = 0; l < dX.size(); ++l) {
    const Mat<double>& m = dX[l];
    write_array(dir, "grad_" + prefix + "_" + std::to_string(l + 1), {m.rows(), m.cols()},
                row_major(m.data(), 1, static_cast<int>(m.rows()), static_cast<int>(m.cols())));
  }
}

int run_backward(const Args& args) {
  args.require_one_of({"prompt", "tokens"});  // usage mistakes before any file is read
  if (args.has("context") && args.has("context-tokens")) args.require_one_of({"context", "context-tokens"});
  const std::filesystem::path dir = args.get("out-dir");
  const OpenedModel opened = load_text_model(args.get("model"), "backward");
  const Model& model = opened.checkpoint.model;
  const Architecture& arch = architecture(model.config);
  const Tokenizer& tok = *opened.tokenizer;
  const Tokens z = context_tokens(args, model.config, tok);
  const Tokens x = input_tokens(args, model.config, tok, prompt_with_eos(arch));
  const Batch batch = loss_batch(args, model.config, z, x);

  std::cout << "model: " << args.get("model") << " (" << config_summary(model.config) << ")\n";
  std::cout << "loss(θ) of " << algorithm_name(arch.training_algorithm()) << " for this one sequence: the sum of its "
            << batch.n_targets() << " terms; P from " << algorithm_title(arch.forward_algorithm()) << "\n";
  if (arch.has_context()) std::cout << "context z = [" << id_list(z) << "]  (ℓ_z = " << z.size() << ")\n";
  print_tokens(std::cout, x, tok);
  if (arch.output() == OutputKind::FillIn) std::cout << "x̃ = [" << id_list(batch.tokens) << "]  (the model's input)\n";

  if (batch.n_targets() == 0) std::cout << "(no position has a target: the loss is 0 and so is every gradient)\n";
  const SequenceGradient g = sequence_gradient(model, batch);

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw Error("--out-dir " + dir.string() + " is not a folder and cannot be made one" +
                (ec ? " (" + ec.message() + ")" : "") + ": give another path");
  std::cout << "\nloss = " << std::setprecision(17) << g.loss << std::setprecision(6) << "\nwrote to " << dir.string()
            << " (float64 .npy, C order):\n";
  write_array(dir, "loss", {}, {g.loss});
  for (const ParamEntry& e : model.table.entries())
    write_array(dir, "grad_" + e.name, e.shape(), row_major(g.grad.data() + e.offset, e.count, e.rows, e.cols));
  write_stream(dir, "X", g.stream.X);
  write_stream(dir, "Z", g.stream.Z);
  return 0;
}

}  // namespace

Command backward_command() {
  CommandSpec s;
  s.name = "backward";
  s.summary = "Write loss(θ) of one sequence, ∇loss(θ) and the residual stream's gradients as .npy files.";
  s.synopsis =
      "--model MODEL (--tokens IDS | --prompt TEXT) [--context TEXT | --context-tokens IDS] [--masks POSITIONS] "
      "--out-dir DIR";
  s.description =
      "Runs the model's forward algorithm on one sequence, the loss of its training algorithm, and the backward "
      "pass that training uses, all in float64 (θ's float32 values are exact in double), and writes every "
      "gradient as a NumPy file, so that another implementation can be checked against it entry by entry.\n"
      "The loss is the paper's for one sequence, SUMMED over its terms (not divided by their number, as the "
      "minibatch training of stepformer-cli train does: its gradients are these divided by the number of terms):\n"
      "GPT (Algorithm 13): loss = −Σ_{t=1}^{ℓ−1} log P[x[t+1], t] (every position, a prefix-LM model too);\n"
      "BERT (Algorithm 12): x̃ is x with the --masks positions replaced by mask_token, P = ETransformer(x̃), and "
      "loss = −Σ_{t∈masks} log P[x[t], t];\n"
      "Encoder-decoder (Algorithm 11): loss = −Σ_{t=1}^{ℓ_x−1} log P[x[t+1], t] with P = EDTransformer(z, x).\n"
      "Files in DIR, float64 in C order (numpy.load gives the paper's shapes):\n"
      "loss.npy: the loss, a 0-d array.\n"
      "grad_<tensor>.npy: ∂loss/∂<tensor> for every tensor of θ, named and shaped as in a Stepformer "
      "checkpoint (e.g. grad_layer1.attn.W_q.npy, (H, d_attn, d_e); stepformer-cli info lists them). A tied W_u = "
      "W_eᵀ has no file: grad_W_e holds both uses.\n"
      "grad_X_<l>.npy: ∂loss/∂X (d_e, ℓ), tokens as columns, as the residual stream X enters layer l = 1 … "
      "L; grad_X_<L+1> is after the last layer: for a pre-LN model before the final layer norm, for a post-LN "
      "model after layer L's last layer norm. The encoder-decoder writes its decoder's X (l = 1 … L_dec+1) and "
      "its encoder's grad_Z_<l>.npy (d_e, ℓ_z) (l = 1 … L_enc+1; Z after the encoder sums the gradient of every "
      "decoder layer's cross-attention).";
  s.options = {
      {"model", "MODEL",
       "The model to load: a .safetensors file written by stepformer-cli init or train, or a checkpoint from the "
       "ecosystem in a folder with its config.json and tokenizer files (docs/ecosystem.md).",
       true},
      {"tokens", "IDS",
       "The sequence x as comma-separated token ids, 1-based as the paper numbers them (N_V−2 is mask_token, "
       "N_V−1 bos_token, N_V eos_token), e.g. 63,1,3,2. Nothing is added. Give --tokens or --prompt."},
      {"prompt", "TEXT",
       "The sequence x as text, encoded [bos_token, characters…] (BERT: [bos_token, characters…, eos_token]), at "
       "most ℓ_max tokens."},
      {"context", "TEXT",
       "Encoder-decoder models only, and required there: the context z as text, encoded [bos_token, characters…, "
       "eos_token]."},
      {"context-tokens", "IDS", "Encoder-decoder models: the context z as 1-based token ids (instead of --context)."},
      {"masks", "POSITIONS",
       "BERT only, and required there: the 1-based positions of x to replace by mask_token, comma-separated, e.g. "
       "2,4; the loss scores the original x[t] at each."},
      {"out-dir", "DIR", "The folder to write the .npy files to (made if missing; files there are replaced).", true},
  };
  s.examples =
      "  stepformer-cli backward --model model.safetensors --tokens 63,1,3,2 --out-dir grads\n"
      "  stepformer-cli backward --model bert.safetensors --prompt \"hello\" --masks 2,4 --out-dir grads\n"
      "  stepformer-cli backward --model ed.safetensors --context \"dcab\" --prompt \"abcd\" --out-dir grads\n"
      "  python3 -c \"import numpy; print(numpy.load('grads/grad_X_1.npy').shape)\"\n";
  return {s, run_backward};
}

}  // namespace sf::cli
