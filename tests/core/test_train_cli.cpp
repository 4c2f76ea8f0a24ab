// stepformer-cli train, end to end (the built program, path in STEPFORMER_CLI):
//  - the paper's mode, exactly as `train --model IN --sequences FILE --sgd --lr η --epochs N
//    --out OUT`, equals an SGD update computed here by hand for one sequence;
//  - Ctrl+C (SIGINT sent to the child) writes a checkpoint and exits with status 130, and
//    --resume from it gives bitwise the losses and θ of an uninterrupted run;
//  - an injected NaN (STEPFORMER_INJECT_NAN_AT) stops training with a message naming the step,
//    and the last good checkpoint still loads;
//  - mistakes in the options are one-line usage errors.
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/io/checkpoint.hpp"
#include "grad_check.hpp"

namespace test_train_cli {

using namespace sf;
using namespace sf::test;
namespace fs = std::filesystem;

namespace {

const char* kTinyConfig = R"({"L": 1, "H": 2, "d_e": 16, "d_attn": 8, "d_mid": 8, "d_mlp": 32, "l_max": 20})";

struct Outcome {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class TrainCli : public ::testing::Test {
 protected:
  static inline fs::path dir;

  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("stepformer_train_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "tiny.json") << kTinyConfig;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  // Starts stepformer-cli ARGS with extra environment variables; stdout to a file, stderr to a
  // pipe (returned in err_fd). Returns the child's pid.
  static pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& env, int& err_fd) {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    const std::string out = (dir / "stdout.txt").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      ::close(fds[1]);
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
      const int in = ::open("/dev/null", O_RDONLY);
      ::dup2(in, 0);
      for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> argv{const_cast<char*>(STEPFORMER_CLI)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(STEPFORMER_CLI, argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    err_fd = fds[0];
    return pid;
  }

  static int wait_status(pid_t pid) {
    int raw = 0;
    ::waitpid(pid, &raw, 0);
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : WIFSIGNALED(raw) ? 128 + WTERMSIG(raw) : -1;
  }

  static std::string drain(int fd) {
    std::string s;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return s;
  }

  static Outcome run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    int err_fd = -1;
    const pid_t pid = spawn(args, env, err_fd);
    Outcome r;
    r.err = drain(err_fd);
    r.status = wait_status(pid);
    r.out = slurp(dir / "stdout.txt");
    return r;
  }

  static std::string path(const std::string& name) { return (dir / name).string(); }

  // A small practical run on the sorting task, constant learning rate after no warmup (so that
  // the schedule does not depend on --steps).
  static std::vector<std::string> sort_run(const std::string& out, int steps, int eval_every) {
    return {"train",
            "--config",
            path("tiny.json"),
            "--task",
            "sort",
            "--seed",
            "3",
            "--train-size",
            "300",
            "--val-size",
            "40",
            "--batch",
            "8",
            "--lr",
            "0.003",
            "--min-lr",
            "0.003",
            "--warmup",
            "0",
            "--steps",
            std::to_string(steps),
            "--eval-every",
            std::to_string(eval_every),
            "--out",
            out};
  }

  static std::vector<float> extra(const Checkpoint& c, const std::string& name) {
    const auto it = c.extra.find(name);
    return it == c.extra.end() ? std::vector<float>{} : it->second.data;
  }

  static void expect_usage_error(const std::vector<std::string>& args) {
    const Outcome r = run(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err.rfind("stepformer-cli: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
};

TEST_F(TrainCli, PaperModeIsTheByHandSgdUpdateOfItsOneSequence) {
  ASSERT_EQ(run({"init", "--config", path("tiny.json"), "--seed", "9", "--out", path("in.safetensors")}).status, 0);
  std::ofstream(dir / "one.txt") << "hello=ehllo\n";
  const double eta = 0.05;
  const Outcome r = run({"train", "--model", path("in.safetensors"), "--sequences", path("one.txt"), "--sgd", "--lr",
                         "0.05", "--epochs", "1", "--out", path("out.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Algorithm 13"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokens/s"), std::string::npos) << r.out;

  const Model in = load_checkpoint(path("in.safetensors")).model;
  const Checkpoint out = load_checkpoint(path("out.safetensors"));
  EXPECT_EQ(out.metadata.at("train.mode"), "paper");
  EXPECT_EQ(out.metadata.at("train.step"), "1");
  // By hand: x = [bos_token, h, e, l, l, o, =, e, h, l, l, o, eos_token] with the model's
  // vocabulary; ∇loss(θ) by central differences of −Σ log P[x[t+1], t] from core's Algorithm 10
  // in double; θ ← θ − η·∇loss(θ).
  const ModelConfig& c = in.config;
  auto id = [&](char ch) {
    return static_cast<int>(std::find(c.vocab.begin(), c.vocab.end(), std::string(1, ch)) - c.vocab.begin()) + 1;
  };
  Tokens x{c.bos_token()};
  for (char ch : std::string("hello=ehllo")) x.push_back(id(ch));
  x.push_back(c.eos_token());
  std::vector<double> theta(in.theta.begin(), in.theta.end());
  auto loss = [&] {
    const MatD P = dtransformer<double>(x, c, bind_gpt<const double>(in.table, theta.data()));
    double s = 0;
    for (size_t t = 0; t + 1 < x.size(); ++t) s -= std::log(P(x[t + 1] - 1, t));
    return s;
  };
  const MatD g = numeric_gradient(theta.data(), static_cast<Eigen::Index>(theta.size()), 1, loss);
  double worst = 0;
  for (size_t k = 0; k < theta.size(); ++k)
    worst = std::max(worst, std::abs(out.model.theta[k] - (static_cast<double>(in.theta[k]) - eta * g(k, 0))));
  // θ − η·g rounded to float (≤ u·|θ| = 6e-8 for |θ| ≤ 1, u = 2⁻²⁴) plus η = 0.05 times the float
  // gradient's error (≲ 1e-6 relative of |g| ≲ 1: ≲ 5e-8) plus the central differences' (1e-11).
  EXPECT_LT(worst, 2e-7);
  EXPECT_GT((Eigen::Map<const VecF>(out.model.theta.data(), theta.size()) -
             Eigen::Map<const VecF>(in.theta.data(), theta.size()))
                .norm(),
            1e-4);  // it did move
}

TEST_F(TrainCli, CtrlCSavesACheckpointAndResumingRepeatsTheUninterruptedRun) {
  // Interrupt a long run once it has reported progress.
  int err_fd = -1;
  const pid_t pid = spawn(sort_run(path("int.safetensors"), 1'000'000, 5), {}, err_fd);
  std::string err;
  char buf[512];
  while (err.find("step ") == std::string::npos) {
    const ssize_t n = ::read(err_fd, buf, sizeof buf);
    ASSERT_GT(n, 0) << "no progress line: " << err;
    err.append(buf, static_cast<size_t>(n));
  }
  ::kill(pid, SIGINT);
  err += drain(err_fd);
  ASSERT_EQ(wait_status(pid), 130) << err;
  EXPECT_NE(err.find("interrupted at step"), std::string::npos) << err;
  EXPECT_NE(err.find("--resume"), std::string::npos) << err;
  const Checkpoint stopped = load_checkpoint(path("int.safetensors"));
  const int k = std::stoi(stopped.metadata.at("train.step"));
  ASSERT_GE(k, 5);
  EXPECT_EQ(extra(stopped, "train.loss").size(), static_cast<size_t>(k));
  EXPECT_EQ(extra(stopped, "optimizer.m").size(), stopped.model.theta.size());

  // Resume to k + 12 steps, and run k + 12 steps in one go: the same losses and θ, bitwise.
  std::vector<std::string> resume = sort_run(path("int.safetensors"), k + 12, 7);
  resume.insert(resume.end(), {"--resume", path("int.safetensors")});
  const Outcome r = run(resume);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("resuming"), std::string::npos) << r.out;
  const Outcome whole = run(sort_run(path("whole.safetensors"), k + 12, 0));
  ASSERT_EQ(whole.status, 0) << whole.err;
  const Checkpoint a = load_checkpoint(path("int.safetensors")), b = load_checkpoint(path("whole.safetensors"));
  EXPECT_EQ(a.metadata.at("train.step"), std::to_string(k + 12));
  EXPECT_EQ(extra(a, "train.loss"), extra(b, "train.loss"));
  EXPECT_EQ(a.model.theta, b.model.theta);
  EXPECT_EQ(extra(a, "optimizer.v"), extra(b, "optimizer.v"));
}

TEST_F(TrainCli, AnInjectedNanStopsTrainingAndKeepsTheLastGoodCheckpoint) {
  const Outcome r = run(sort_run(path("nan.safetensors"), 40, 5), {"STEPFORMER_INJECT_NAN_AT=13"});
  EXPECT_EQ(r.status, 1);
  const std::string last = r.err.substr(r.err.rfind("stepformer-cli: error: "));
  EXPECT_NE(last.find("NaN at step 13"), std::string::npos) << r.err;
  EXPECT_NE(last.find("step 10"), std::string::npos) << r.err;    // the last checkpoint
  const Checkpoint c = load_checkpoint(path("nan.safetensors"));  // loads: every value finite
  EXPECT_EQ(c.metadata.at("train.step"), "10");
  EXPECT_EQ(extra(c, "train.loss").size(), 10u);
}

TEST_F(TrainCli, ProgressLinesAndTheFinalSummary) {
  const Outcome r = run(sort_run(path("p.safetensors"), 20, 10));
  ASSERT_EQ(r.status, 0) << r.err;
  // stderr is not a terminal here: one line per evaluation, with step, losses, tokens/s, time left.
  EXPECT_NE(r.err.find("step 10/20  train "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  val "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" tok/s "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" left"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("trained 20 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokens/s: "), std::string::npos) << r.out;
  const Checkpoint c = load_checkpoint(path("p.safetensors"));
  EXPECT_EQ(extra(c, "train.val_step"), (std::vector<float>{10, 20}));
  EXPECT_EQ(c.metadata.at("train.mode"), "practical");
}

TEST_F(TrainCli, MistakesAreUsageErrors) {
  const std::string out = path("x.safetensors");
  expect_usage_error({"train", "--out", out});                                             // no data
  expect_usage_error({"train", "--task", "sort", "--text", "a.txt", "--out", out});        // two data sources
  expect_usage_error({"train", "--task", "sort", "--epochs", "2", "--out", out});          // --epochs needs --sgd
  expect_usage_error({"train", "--task", "sort", "--sgd", "--batch", "4", "--out", out});  // no batch in Alg. 13
  expect_usage_error({"train", "--task", "sort", "--lr", "-1", "--out", out});
  expect_usage_error({"train", "--task", "sort", "--config", "a.json", "--model", "b", "--out", out});
  const Outcome unknown = run({"train", "--task", "juggle", "--out", out});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.err.find("sort, reverse, copy, add, words"), std::string::npos) << unknown.err;
  const Outcome help = run({"help", "train"});
  for (const char* o : {"--sgd", "--epochs", "--resume", "--task", "--text", "--sequences", "--weight-decay", "--clip",
                        "--warmup", "--eval-every", "--threads", "bos_token"})
    EXPECT_NE(help.out.find(o), std::string::npos) << o;
}

}  // namespace

#else

TEST(TrainCli, NotBuilt) { GTEST_SKIP() << "stepformer-cli is not part of this build"; }

#endif

}  // namespace test_train_cli
