// Threads for the large matrix products of untraced inference (not in the paper: speed only).
// Core is built with EIGEN_DONT_PARALLELIZE; these split a product into blocks fixed by the
// matrix's shape alone (never by the thread count), run on a small persistent pool, so the
// result is bitwise the same on 1, 2 or 4 threads.
#pragma once
#include <algorithm>
#include <functional>
#include <string>

#include "core/model/types.hpp"

namespace sf {

// The threads that parallel_for uses (the caller counts as one). Default:
// std::thread::hardware_concurrency() capped to [1, 4]. set_compute_threads(n) clamps n to [1, 64].
int compute_threads();
void set_compute_threads(int n);

// The library behind core's matrix products, for the app's About › Versions: "OpenBLAS " and its build
// configuration (version, the CPU kernels it chose) when core is built with STEPFORMER_BLAS, else Eigen's own.
std::string matrix_product_library();

// Multiply–adds below which a split does not pay for waking a thread (about 10 µs of work).
constexpr double kParallelMinWork = 1e6;

// fn(k) for k = 0 … n_tasks − 1 on up to compute_threads() threads, the caller among them; returns
// when every call has returned. Tasks must write disjoint outputs. A parallel_for inside a task,
// or while another thread's parallel_for holds the pool, runs its tasks on the calling thread.
// With work < kParallelMinWork (the caller's estimate of multiply–adds), all run on the caller.
void parallel_for(int n_tasks, const std::function<void(int)>& fn, double work = kParallelMinWork);

// fn(k) for k = 0 … n_tasks − 1 on up to `threads` threads of the same pool (the caller among them),
// whatever compute_threads() says: the Trainer's minibatch split (TrainOptions::threads). The same
// rules as parallel_for: disjoint outputs, inline inside a task or while the pool is held.
void parallel_for_on(int threads, int n_tasks, const std::function<void(int)>& fn);

// Y = A·B with the rows of A in blocks fixed by A's shape (large products) or in one piece.
// A (m, k), B (k, n) → (m, n). Bitwise the same on any number of threads.
template <class T, class DerivedA>
Mat<T> product(const Eigen::MatrixBase<DerivedA>& A, const Mat<T>& B);
// Y = A·B + b 1ᵀ (a paper line's W X + b 1ᵀ), in the same blocks: Y starts as b 1ᵀ and the product
// is added into it, one pass over Y instead of three (zero-fill, product, + b).
template <class T, class DerivedA, class DerivedB>
Mat<T> product_plus_bias(const Eigen::MatrixBase<DerivedA>& A, const Mat<T>& B, const Eigen::MatrixBase<DerivedB>& b);
// Y += A·B, in the same blocks (a residual line's X + W Z, without a temporary for W Z).
template <class T, class DerivedA>
void add_product(Mat<T>& Y, const Eigen::MatrixBase<DerivedA>& A, const Mat<T>& B);
// Y = Aᵀ·B (the tied unembedding W_eᵀ X): A (k, m) column-major, its columns in fixed blocks → (m, n).
template <class T>
Mat<T> product_transposed(const MapM<const T>& A, const Mat<T>& B);

// The blocks a product of m output rows is cut into: about one per kParallelMinWork multiply–adds,
// at most 16, each a multiple of 16 rows (1: no split).
int product_blocks(Eigen::Index m, Eigen::Index k, Eigen::Index n);

// f(r0, nr) for the row blocks [r0, r0 + nr) of an (m, k)·(k, n) product, as product_blocks cuts them,
// on the compute threads.
template <class F>
void for_product_rows(Eigen::Index m, Eigen::Index k, Eigen::Index n, const F& f) {
  const int blocks = product_blocks(m, k, n);
  if (blocks == 1) {
    f(Eigen::Index{0}, m);
    return;
  }
  const Eigen::Index step = ((m + blocks - 1) / blocks + 15) / 16 * 16;  // blocks·step ≥ m
  parallel_for(blocks, [&](int blk) {
    const Eigen::Index r0 = blk * step, nr = std::min<Eigen::Index>(step, m - r0);
    if (nr > 0) f(r0, nr);
  });
}

template <class T, class DerivedA>
Mat<T> product(const Eigen::MatrixBase<DerivedA>& A, const Mat<T>& B) {
  Mat<T> Y(A.rows(), B.cols());  // (m, n)
  for_product_rows(A.rows(), A.cols(), B.cols(), [&](Eigen::Index r0, Eigen::Index nr) {
    Y.middleRows(r0, nr).noalias() = A.middleRows(r0, nr) * B;
  });
  return Y;
}

template <class T, class DerivedA, class DerivedB>
Mat<T> product_plus_bias(const Eigen::MatrixBase<DerivedA>& A, const Mat<T>& B, const Eigen::MatrixBase<DerivedB>& b) {
  Mat<T> Y(A.rows(), B.cols());  // (m, n)
  for_product_rows(A.rows(), A.cols(), B.cols(), [&](Eigen::Index r0, Eigen::Index nr) {
    auto Y_r = Y.middleRows(r0, nr);  // (nr, n)
    Y_r.colwise() = b.segment(r0, nr);
    Y_r.noalias() += A.middleRows(r0, nr) * B;
  });
  return Y;
}

template <class T, class DerivedA>
void add_product(Mat<T>& Y, const Eigen::MatrixBase<DerivedA>& A, const Mat<T>& B) {
  for_product_rows(A.rows(), A.cols(), B.cols(), [&](Eigen::Index r0, Eigen::Index nr) {
    Y.middleRows(r0, nr).noalias() += A.middleRows(r0, nr) * B;
  });
}

}  // namespace sf
