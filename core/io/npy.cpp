#include "core/io/npy.hpp"

#include <cstring>

#include "core/model/error.hpp"
#include "core/io/fileio.hpp"

namespace sf {

namespace {

// The magic, version 1.0 and the header dict of a little-endian C-order array, padded so that the
// data starts at a multiple of 64 bytes. `shape` is the Python tuple's inside: "3, 4", "5," or "".
std::string npy_header(const char* descr, const std::string& shape) {
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  const uint16_t hl = static_cast<uint16_t>(header.size());
  out += static_cast<char>(hl & 0xFF);
  out += static_cast<char>(hl >> 8);
  return out + header;
}

}  // namespace

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<double>& data) {
  std::string dims;
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += (i ? ", " : "") + std::to_string(shape[i]);
    n *= shape[i];
  }
  if (shape.size() == 1) dims += ',';  // (5,): a one-element tuple
  if (n != static_cast<int64_t>(data.size()))
    throw Error(path + ": " + std::to_string(data.size()) + " values do not fill the shape");
  std::string out = npy_header("<f8", dims);
  out.append(reinterpret_cast<const char*>(data.data()), sizeof(double) * data.size());  // little-endian hosts
  write_file_atomic(path, out);
}

void write_npy(const std::string& path, const ConstMatRef& m) {
  std::string out = npy_header("<f4", std::to_string(m.rows()) + ", " + std::to_string(m.cols()));
  out.reserve(out.size() + sizeof(float) * static_cast<size_t>(m.size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i)  // C order, read through any strides
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const float x = m(i, j);
      out.append(reinterpret_cast<const char*>(&x), sizeof x);
    }
  write_file_atomic(path, out);
}

MatF read_npy(const std::string& path) {
  const std::string s = read_file(path, size_t(1) << 31);
  if (s.size() < 10 || s.compare(0, 6, "\x93NUMPY") != 0) throw Error(path + " is not a .npy file");
  const size_t hl = static_cast<unsigned char>(s[8]) | (static_cast<unsigned char>(s[9]) << 8);
  if (10 + hl > s.size()) throw Error(path + ": truncated .npy header");
  const std::string h = s.substr(10, hl);
  const bool f8 = h.find("'<f8'") != std::string::npos;
  if (!f8 && h.find("'<f4'") == std::string::npos) throw Error(path + ": only float32/float64 .npy files are read");
  if (h.find("'fortran_order': False") == std::string::npos) throw Error(path + ": Fortran-order .npy not supported");
  const size_t a = h.find('('), b = h.find(')');
  if (a == std::string::npos || b == std::string::npos) throw Error(path + ": .npy header has no shape");
  // The shape: dimensions of decimal digits, each no more than the data could hold (no sign, no
  // overflow: a hostile header must not make the product wrap round to the file's size).
  const size_t item = f8 ? 8 : 4, data_bytes = s.size() - 10 - hl;
  std::vector<long> dims;
  std::string inner = h.substr(a + 1, b - a - 1);
  for (size_t p = 0; p < inner.size();) {
    while (p < inner.size() && (inner[p] == ' ' || inner[p] == ',')) ++p;
    if (p >= inner.size()) break;
    if (inner[p] < '0' || inner[p] > '9') throw Error(path + ": the .npy shape (" + inner + ") is not a tuple of sizes");
    size_t d = 0;
    for (; p < inner.size() && inner[p] >= '0' && inner[p] <= '9'; ++p) {
      d = d * 10 + static_cast<size_t>(inner[p] - '0');
      if (d > data_bytes) throw Error(path + ": data size does not match the shape (" + inner + ")");
    }
    dims.push_back(static_cast<long>(d));
    while (p < inner.size() && inner[p] == ' ') ++p;
    if (p < inner.size() && inner[p] != ',') throw Error(path + ": the .npy shape (" + inner + ") is not a tuple of sizes");
  }
  if (dims.empty() || dims.size() > 2) throw Error(path + ": only 1-D and 2-D .npy arrays are read");
  const long rows = dims[0], cols = dims.size() == 2 ? dims[1] : 1;
  // rows, cols ≤ data_bytes, so the products below cannot wrap unless the data is empty.
  if (cols != 0 && static_cast<size_t>(rows) > data_bytes / item / static_cast<size_t>(cols))
    throw Error(path + ": data size does not match the shape");
  const size_t need = static_cast<size_t>(rows) * static_cast<size_t>(cols) * item;
  if (need != data_bytes) throw Error(path + ": data size does not match the shape");
  MatF m(rows, cols);
  const char* d = s.data() + 10 + hl;
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c) {
      const size_t k = static_cast<size_t>(r) * cols + c;
      if (f8) {
        double v;
        std::memcpy(&v, d + k * 8, 8);
        m(r, c) = static_cast<float>(v);
      } else {
        std::memcpy(&m(r, c), d + k * 4, 4);
      }
    }
  return m;
}

}  // namespace sf
