// funcgrad's <torch/extension.h>: the subset of ATen and pybind11 that C++ extensions use, as one
// self-contained header (no libtorch, no pybind11, no Python.h), so that the sources of torch's
// "Custom C++ and CUDA Extensions" tutorial compile with the system C++ compiler against funcgrad.
//
// What it has (docs/cpp-extension.md lists it in full):
//  - at::Tensor / torch::Tensor: a reference-counted strided view of a CPU buffer (uint8, int8, int16,
//    int32, int64, float32, float64, bool): data_ptr<T>(), accessor<T, N>(), packed_accessor32/64,
//    sizes/strides/dim/numel/scalar_type/dtype/options, is_contiguous/contiguous, views (view, reshape,
//    transpose, t, permute, narrow, slice, select, unsqueeze, squeeze, flatten, chunk, split, expand),
//    clone/copy_/to/type_as/fill_/zero_/item, elementwise arithmetic with broadcasting and torch's type
//    promotion, comparisons, a few unary functions (exp, log, tanh, sigmoid, relu, elu, ...), sum/mean,
//    mm/addmm/matmul (2-D) and cat.
//  - factories torch::empty/zeros/ones/full/arange/*_like/from_blob with TensorOptions, TORCH_CHECK and
//    its variants, AT_DISPATCH_* macros.
//  - PYBIND11_MODULE(name, m) { m.def("f", &f, "doc", py::arg("x") = 1.0); }: funcgrad reads the
//    functions' C++ signatures through templates and calls them through a C ABI (funcgrad's
//    cpp_extension loads the library with ctypes); the arguments and results cross as strided buffers.
// Not here: autograd inside C++ (register the op's gradient in Python with register_autograd), CUDA,
// half/bfloat16/complex arithmetic, TORCH_LIBRARY registration, and most of ATen's operators.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#define FGX_EXT_ABI_VERSION 3
#if defined(_WIN32)
#define FGX_EXPORT __declspec(dllexport)
#else
#define FGX_EXPORT __attribute__((visibility("default")))
#endif

// ------------------------------------------------------------------------------------------------
// c10: scalar types, errors, ArrayRef, Scalar, Device
// ------------------------------------------------------------------------------------------------
namespace c10 {

// The numbering is torch's (c10/core/ScalarType.h); funcgrad's Python side uses the same codes.
enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7,
  ComplexHalf = 8, ComplexFloat = 9, ComplexDouble = 10, Bool = 11, QInt8 = 12, QUInt8 = 13,
  QInt32 = 14, BFloat16 = 15, Undefined = 100
};
constexpr ScalarType kByte = ScalarType::Byte, kChar = ScalarType::Char, kShort = ScalarType::Short,
    kInt = ScalarType::Int, kLong = ScalarType::Long, kHalf = ScalarType::Half, kFloat = ScalarType::Float,
    kDouble = ScalarType::Double, kBool = ScalarType::Bool, kBFloat16 = ScalarType::BFloat16,
    kComplexHalf = ScalarType::ComplexHalf, kComplexFloat = ScalarType::ComplexFloat,
    kComplexDouble = ScalarType::ComplexDouble;
constexpr ScalarType kUInt8 = kByte, kInt8 = kChar, kInt16 = kShort, kInt32 = kInt, kInt64 = kLong,
    kFloat16 = kHalf, kFloat32 = kFloat, kFloat64 = kDouble, kU8 = kByte, kI8 = kChar, kI16 = kShort,
    kI32 = kInt, kI64 = kLong, kF16 = kHalf, kF32 = kFloat, kF64 = kDouble, kComplex64 = kComplexFloat,
    kComplex128 = kComplexDouble;

inline const char* toString(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int";
    case ScalarType::Long: return "Long";
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::Double: return "Double";
    case ScalarType::ComplexHalf: return "ComplexHalf";
    case ScalarType::ComplexFloat: return "ComplexFloat";
    case ScalarType::ComplexDouble: return "ComplexDouble";
    case ScalarType::Bool: return "Bool";
    case ScalarType::BFloat16: return "BFloat16";
    default: return "UNKNOWN_SCALAR";
  }
}
inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

inline size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int: case ScalarType::Float: return 4;
    case ScalarType::Long: case ScalarType::Double: case ScalarType::ComplexFloat: return 8;
    case ScalarType::ComplexDouble: return 16;
    default: return 0;
  }
}
inline bool isFloatingType(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half || t == ScalarType::BFloat16;
}
inline bool isIntegralType(ScalarType t, bool includeBool) {
  return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Short || t == ScalarType::Int ||
         t == ScalarType::Long || (includeBool && t == ScalarType::Bool);
}
inline bool isComplexType(ScalarType t) {
  return t == ScalarType::ComplexHalf || t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble;
}

// str(args...): the arguments streamed into one string (TORCH_CHECK's message).
inline void str_into(std::ostringstream&) {}
template <class T, class... R>
void str_into(std::ostringstream& os, const T& v, const R&... rest) { os << v; str_into(os, rest...); }
template <class... A>
std::string str(const A&... args) { std::ostringstream os; str_into(os, args...); return os.str(); }

// The exceptions funcgrad turns into Python ones: Error -> RuntimeError, ValueError, TypeError,
// IndexError, NotImplementedError (as torch's error macros).
class Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  const std::string& msg() const { return msg_; }
 private:
  std::string msg_;
};
class ValueError : public Error { using Error::Error; };
class TypeError : public Error { using Error::Error; };
class IndexError : public Error { using Error::Error; };
class NotImplementedError : public Error { using Error::Error; };

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
template <class T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  ArrayRef() : data_(nullptr), size_(0) {}
  ArrayRef(const T& one) : data_(&one), size_(1) {}
  ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  ArrayRef(const T* begin, const T* end) : data_(begin), size_(end - begin) {}
  template <class A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), size_(v.size()) {}
  template <size_t N>
  ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}
  ArrayRef(const std::initializer_list<T>& l) : data_(l.begin() == l.end() ? nullptr : l.begin()), size_(l.size()) {}
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    if (i >= size_) throw IndexError(str("ArrayRef: index ", i, " out of range for size ", size_));
    return data_[i];
  }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(data_, data_ + size_); }
  bool equals(ArrayRef other) const {
    return size_ == other.size_ && std::equal(begin(), end(), other.begin());
  }
  bool operator==(ArrayRef other) const { return equals(other); }
  bool operator!=(ArrayRef other) const { return !equals(other); }
 private:
  const T* data_;
  size_t size_;
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
using IntArrayRef = ArrayRef<int64_t>;
template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << "[";
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << "]";
}

template <class T> using optional = std::optional<T>;
using std::nullopt;
using std::make_optional;
template <class T> using OptionalArrayRef = std::optional<ArrayRef<T>>;

// A number of any of torch's scalar kinds (what Tensor.fill_, the arithmetic operators and factories take).
class Scalar {
 public:
  Scalar() : Scalar(int64_t(0)) {}
  template <class T, std::enable_if_t<std::is_arithmetic<T>::value, int> = 0>
  Scalar(T v) {
    if (std::is_same<T, bool>::value) { tag_ = 'b'; i_ = v ? 1 : 0; d_ = i_; }
    else if (std::is_floating_point<T>::value) { tag_ = 'd'; d_ = static_cast<double>(v); i_ = static_cast<int64_t>(d_); }
    else { tag_ = 'i'; i_ = static_cast<int64_t>(v); d_ = static_cast<double>(i_); }
  }
  bool isFloatingPoint() const { return tag_ == 'd'; }
  bool isIntegral(bool includeBool) const { return tag_ == 'i' || (includeBool && tag_ == 'b'); }
  bool isBoolean() const { return tag_ == 'b'; }
  double toDouble() const { return d_; }
  float toFloat() const { return static_cast<float>(d_); }
  int64_t toLong() const { return tag_ == 'd' ? static_cast<int64_t>(d_) : i_; }
  int toInt() const { return static_cast<int>(toLong()); }
  bool toBool() const { return tag_ == 'd' ? d_ != 0.0 : i_ != 0; }
  template <class T> T to() const {
    if (std::is_same<T, bool>::value) return static_cast<T>(toBool());
    if (std::is_floating_point<T>::value || tag_ == 'd') return static_cast<T>(d_);
    return static_cast<T>(i_);
  }
  ScalarType type() const { return tag_ == 'd' ? ScalarType::Double : tag_ == 'b' ? ScalarType::Bool : ScalarType::Long; }
  Scalar operator-() const { return tag_ == 'd' ? Scalar(-d_) : Scalar(-i_); }
 private:
  char tag_ = 'i';
  int64_t i_ = 0;
  double d_ = 0;
};
inline std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.isFloatingPoint()) return os << s.toDouble();
  if (s.isBoolean()) return os << (s.toBool() ? "true" : "false");
  return os << s.toLong();
}

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
struct Device {
  Device(DeviceType t = DeviceType::CPU, int8_t index = -1) : type_(t), index_(index) {}
  Device(const std::string& s) : type_(s.rfind("cuda", 0) == 0 ? DeviceType::CUDA : DeviceType::CPU), index_(-1) {}
  DeviceType type() const { return type_; }
  int8_t index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const { return type_ == DeviceType::CPU ? "cpu" : "cuda"; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
 private:
  DeviceType type_;
  int8_t index_;
};
inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
enum class Layout : int8_t { Strided = 0 };
constexpr Layout kStrided = Layout::Strided;
enum class MemoryFormat : int8_t { Contiguous = 0, Preserve = 1 };

template <class T> struct CppTypeToScalarType;
#define FGX_CPP_TYPE(T, ST) template <> struct CppTypeToScalarType<T> { static constexpr ScalarType value = ScalarType::ST; };
FGX_CPP_TYPE(uint8_t, Byte) FGX_CPP_TYPE(int8_t, Char) FGX_CPP_TYPE(int16_t, Short) FGX_CPP_TYPE(int32_t, Int)
FGX_CPP_TYPE(int64_t, Long) FGX_CPP_TYPE(float, Float) FGX_CPP_TYPE(double, Double) FGX_CPP_TYPE(bool, Bool)
#undef FGX_CPP_TYPE

}  // namespace c10

namespace caffe2 {
// Tensor.dtype(): compares equal to the ScalarType it stands for.
struct TypeMeta {
  TypeMeta(c10::ScalarType t = c10::ScalarType::Float) : t_(t) {}
  c10::ScalarType toScalarType() const { return t_; }
  size_t itemsize() const { return c10::elementSize(t_); }
  const char* name() const {
    switch (t_) {
      case c10::ScalarType::Byte: return "unsigned char";
      case c10::ScalarType::Char: return "signed char";
      case c10::ScalarType::Short: return "short int";
      case c10::ScalarType::Int: return "int";
      case c10::ScalarType::Long: return "long int";
      case c10::ScalarType::Float: return "float";
      case c10::ScalarType::Double: return "double";
      case c10::ScalarType::Bool: return "bool";
      default: return c10::toString(t_);
    }
  }
  template <class T> bool Match() const { return t_ == c10::CppTypeToScalarType<T>::value; }
  bool operator==(const TypeMeta& o) const { return t_ == o.t_; }
  bool operator!=(const TypeMeta& o) const { return t_ != o.t_; }
  bool operator==(c10::ScalarType s) const { return t_ == s; }
  bool operator!=(c10::ScalarType s) const { return t_ != s; }
  friend bool operator==(c10::ScalarType s, const TypeMeta& m) { return m == s; }
  friend bool operator!=(c10::ScalarType s, const TypeMeta& m) { return m != s; }
 private:
  c10::ScalarType t_;
};
inline std::ostream& operator<<(std::ostream& os, const TypeMeta& m) { return os << m.name(); }
}  // namespace caffe2

namespace c10 {
inline ScalarType typeMetaToScalarType(caffe2::TypeMeta m) { return m.toScalarType(); }
// Tensor.type() (deprecated in torch, still in tutorials' AT_DISPATCH calls).
struct DeprecatedTypeProperties {
  explicit DeprecatedTypeProperties(ScalarType t) : t_(t) {}
  ScalarType scalarType() const { return t_; }
  operator ScalarType() const { return t_; }
  bool is_cuda() const { return false; }
  std::string toString() const { return std::string("CPU") + c10::toString(t_) + "Type"; }
 private:
  ScalarType t_;
};
}  // namespace c10

// ------------------------------------------------------------------------------------------------
// The error macros
// ------------------------------------------------------------------------------------------------
namespace fgx {
inline std::string check_msg(const char* cond, const std::string& msg) {
  if (!msg.empty()) return msg;
  return c10::str("Expected ", cond, " to be true, but got false.  (Could this error message be improved?  If so, "
                  "please report an enhancement request to PyTorch.)");
}
}  // namespace fgx

#define FGX_CHECK_AS(EXC, cond, ...) \
  do { if (!(cond)) throw EXC(::fgx::check_msg(#cond, ::c10::str(__VA_ARGS__))); } while (0)
#define TORCH_CHECK(cond, ...) FGX_CHECK_AS(::c10::Error, cond, __VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) FGX_CHECK_AS(::c10::ValueError, cond, __VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) FGX_CHECK_AS(::c10::TypeError, cond, __VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) FGX_CHECK_AS(::c10::IndexError, cond, __VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) FGX_CHECK_AS(::c10::NotImplementedError, cond, __VA_ARGS__)
#define TORCH_CHECK_ARG(cond, argN, ...) FGX_CHECK_AS(::c10::Error, cond, "Expected argument #", argN, " ", __VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...) \
  FGX_CHECK_AS(::c10::Error, cond, "INTERNAL ASSERT FAILED: ", #cond, " ", ::c10::str(__VA_ARGS__))
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) do { } while (0)
#define AT_ASSERT(cond, ...) TORCH_INTERNAL_ASSERT(cond, __VA_ARGS__)
#define AT_ERROR(...) throw ::c10::Error(::c10::str(__VA_ARGS__))
#define TORCH_WARN(...) (std::cerr << "Warning: " << ::c10::str(__VA_ARGS__) << std::endl)
#define TORCH_WARN_ONCE(...) TORCH_WARN(__VA_ARGS__)

// ------------------------------------------------------------------------------------------------
// TensorOptions, accessors, Tensor
// ------------------------------------------------------------------------------------------------
namespace at {
using namespace c10;

struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  TensorOptions(caffe2::TypeMeta m) : dtype_(m.toScalarType()) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType d) : device_(d) {}
  TensorOptions(Layout) {}
  TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
  TensorOptions dtype(caffe2::TypeMeta m) const { return dtype(m.toScalarType()); }
  template <class T> TensorOptions dtype() const { return dtype(CppTypeToScalarType<T>::value); }
  TensorOptions device(Device d) const { TensorOptions o = *this; o.device_ = d; return o; }
  TensorOptions layout(Layout) const { return *this; }
  TensorOptions requires_grad(bool r = true) const { TensorOptions o = *this; o.requires_grad_ = r; return o; }
  TensorOptions memory_format(MemoryFormat) const { return *this; }
  TensorOptions pinned_memory(bool = true) const { return *this; }
  caffe2::TypeMeta dtype() const { return caffe2::TypeMeta(dtype_.value_or(ScalarType::Float)); }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_; }
  Layout layout() const { return Layout::Strided; }
  bool requires_grad() const { return requires_grad_; }
  // what a field left unset in `this` takes from `o` (the *_like factories)
  TensorOptions merge_in(const TensorOptions& o) const {
    TensorOptions r = o;
    if (dtype_) r.dtype_ = dtype_;
    return r;
  }
  std::optional<ScalarType> dtype_;
  Device device_ = Device(DeviceType::CPU);
  bool requires_grad_ = false;
};
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions dtype(caffe2::TypeMeta m) { return TensorOptions().dtype(m); }
template <class T> inline TensorOptions dtype() { return TensorOptions().dtype(CppTypeToScalarType<T>::value); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline ScalarType typeMetaToScalarType(caffe2::TypeMeta m) { return m.toScalarType(); }
inline caffe2::TypeMeta scalarTypeToTypeMeta(ScalarType t) { return caffe2::TypeMeta(t); }

template <class T> struct DefaultPtrTraits { typedef T* PtrType; };
#if defined(__GNUC__) || defined(__clang__)
template <class T> struct RestrictPtrTraits { typedef T* __restrict__ PtrType; };
#else
template <class T> struct RestrictPtrTraits { typedef T* PtrType; };
#endif

// a[i][j]...: N-dimensional indexing over a strided buffer (Tensor.accessor<T, N>()).
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class TensorAccessorBase {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  TensorAccessorBase(PtrType data, const index_t* sizes, const index_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  IntArrayRef sizes() const {
    static_assert(std::is_same<index_t, int64_t>::value, "sizes() needs 64-bit indices");
    return IntArrayRef(sizes_, N);
  }
  index_t size(index_t i) const { return sizes_[i]; }
  index_t stride(index_t i) const { return strides_[i]; }
  PtrType data() { return data_; }
  const PtrType data() const { return data_; }
 protected:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};

template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class TensorAccessor : public TensorAccessorBase<T, N, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  TensorAccessor(PtrType data, const index_t* sizes, const index_t* strides)
      : TensorAccessorBase<T, N, PtrTraits, index_t>(data, sizes, strides) {}
  TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1,
                                                        this->strides_ + 1);
  }
  const TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1,
                                                        this->strides_ + 1);
  }
};
template <class T, template <class> class PtrTraits, class index_t>
class TensorAccessor<T, 1, PtrTraits, index_t> : public TensorAccessorBase<T, 1, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  TensorAccessor(PtrType data, const index_t* sizes, const index_t* strides)
      : TensorAccessorBase<T, 1, PtrTraits, index_t>(data, sizes, strides) {}
  T& operator[](index_t i) { return this->data_[this->strides_[0] * i]; }
  const T& operator[](index_t i) const { return this->data_[this->strides_[0] * i]; }
};

// The accessor that keeps its own copy of the sizes and strides (the one a CUDA kernel takes by value).
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class GenericPackedTensorAccessor {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  GenericPackedTensorAccessor(PtrType data, const int64_t* sizes, const int64_t* strides) : data_(data) {
    for (size_t i = 0; i < N; ++i) { sizes_[i] = static_cast<index_t>(sizes[i]); strides_[i] = static_cast<index_t>(strides[i]); }
  }
  index_t size(index_t i) const { return sizes_[i]; }
  index_t stride(index_t i) const { return strides_[i]; }
  PtrType data() { return data_; }
  const PtrType data() const { return data_; }
  decltype(auto) operator[](index_t i) {
    if constexpr (N == 1) return (data_[strides_[0] * i]);
    else return TensorAccessor<T, N - 1, PtrTraits, index_t>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  decltype(auto) operator[](index_t i) const {
    if constexpr (N == 1) return (static_cast<const T&>(data_[strides_[0] * i]));
    else return TensorAccessor<T, N - 1, PtrTraits, index_t>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
 private:
  PtrType data_;
  index_t sizes_[N];
  index_t strides_[N];
};
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
using PackedTensorAccessor = GenericPackedTensorAccessor<T, N, PtrTraits, index_t>;

}  // namespace at

namespace fgx {
// One buffer: owned (freed by `deleter`) or borrowed from Python (the deleter releases the pin).
struct StorageImpl {
  void* data = nullptr;
  size_t nbytes = 0;
  // torch's version counter, shared by the views of the buffer: an in-place operation (copy_, fill_, zero_, add_,
  // sub_, mul_, div_, the compound assignments) adds one; a write through data_ptr() does not, as in torch.
  // A tensor argument starts at its Python tensor's version; funcgrad adds what C++ added to that tensor.
  int64_t version = 0;
  std::function<void(void*)> deleter;
  StorageImpl() = default;
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;
  ~StorageImpl() { if (deleter) deleter(data); }
};
struct TensorImpl {
  std::shared_ptr<StorageImpl> storage;
  // torch's check of in-place operations (bump_version_): 1 on a tensor argument that is a leaf requiring grad
  // (outside no_grad), 2 on a view of one (an argument, or a view C++ made of one); detach() clears it
  int8_t leaf_guard = 0;
  int64_t offset = 0;  // in elements
  std::vector<int64_t> sizes, strides;
  c10::ScalarType dtype = c10::ScalarType::Float;
  char* ptr() const { return static_cast<char*>(storage->data) + offset * static_cast<int64_t>(c10::elementSize(dtype)); }
};
inline std::shared_ptr<StorageImpl> allocate(size_t nbytes) {
  auto st = std::make_shared<StorageImpl>();
  size_t n = ((nbytes + 63) / 64) * 64;
  if (n == 0) n = 64;
  void* p = nullptr;
#if defined(_WIN32)
  p = _aligned_malloc(n, 64);
  if (!p) throw std::bad_alloc();
  st->deleter = [](void* q) { _aligned_free(q); };
#else
  if (posix_memalign(&p, 64, n) != 0) throw std::bad_alloc();
  st->deleter = [](void* q) { std::free(q); };
#endif
  st->data = p;
  st->nbytes = nbytes;
  return st;
}
inline std::vector<int64_t> contiguous_strides(c10::IntArrayRef sizes) {
  std::vector<int64_t> s(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) { s[i] = acc; acc *= std::max<int64_t>(sizes[i], 1); }
  return s;
}
inline int64_t numel_of(c10::IntArrayRef sizes) {
  int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}
inline int64_t wrap_dim(int64_t d, int64_t ndim) {
  int64_t lo = ndim > 0 ? -ndim : -1, hi = ndim > 0 ? ndim - 1 : 0;
  if (d < lo || d > hi)
    throw c10::IndexError(c10::str("Dimension out of range (expected to be in range of [", lo, ", ", hi, "], but got ", d, ")"));
  return d < 0 ? d + std::max<int64_t>(ndim, 1) : d;
}
template <class T> struct tag { using type = T; };
// f(tag<T>{}) for the C++ type T of scalar type st.
template <class F>
decltype(auto) dispatch(c10::ScalarType st, F&& f) {
  switch (st) {
    case c10::ScalarType::Byte: return f(tag<uint8_t>{});
    case c10::ScalarType::Char: return f(tag<int8_t>{});
    case c10::ScalarType::Short: return f(tag<int16_t>{});
    case c10::ScalarType::Int: return f(tag<int32_t>{});
    case c10::ScalarType::Long: return f(tag<int64_t>{});
    case c10::ScalarType::Float: return f(tag<float>{});
    case c10::ScalarType::Double: return f(tag<double>{});
    case c10::ScalarType::Bool: return f(tag<bool>{});
    default:
      throw c10::TypeError(c10::str("funcgrad's torch/extension.h has no arithmetic for dtype ", st,
                                    " (it supports Byte, Char, Short, Int, Long, Float, Double and Bool)"));
  }
}
[[noreturn]] inline void dispatch_fail(const char* name, c10::ScalarType st) {
  throw c10::Error(c10::str('"', name, "\" not implemented for '", c10::toString(st), "'"));
}
inline c10::ScalarType to_st(c10::ScalarType t) { return t; }
inline c10::ScalarType to_st(const caffe2::TypeMeta& m) { return m.toScalarType(); }
inline c10::ScalarType to_st(const c10::DeprecatedTypeProperties& p) { return p.scalarType(); }
}  // namespace fgx

namespace at {

class Tensor;
using TensorList = ArrayRef<Tensor>;
Tensor empty(IntArrayRef size, TensorOptions options = {});

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<fgx::TensorImpl> impl) : impl_(std::move(impl)) {}

  // --- metadata --------------------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  void reset() { impl_.reset(); }
  fgx::TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  int64_t dim() const { return static_cast<int64_t>(impl().sizes.size()); }
  int64_t ndimension() const { return dim(); }
  IntArrayRef sizes() const { return IntArrayRef(impl().sizes); }
  IntArrayRef strides() const { return IntArrayRef(impl().strides); }
  int64_t size(int64_t d) const { return impl().sizes[fgx::wrap_dim(d, dim())]; }
  int64_t stride(int64_t d) const { return impl().strides[fgx::wrap_dim(d, dim())]; }
  int64_t numel() const { return fgx::numel_of(sizes()); }
  ScalarType scalar_type() const { return impl().dtype; }
  caffe2::TypeMeta dtype() const { return caffe2::TypeMeta(impl().dtype); }
  DeprecatedTypeProperties type() const { return DeprecatedTypeProperties(impl().dtype); }
  size_t element_size() const { return elementSize(impl().dtype); }
  size_t itemsize() const { return element_size(); }
  size_t nbytes() const { return numel() * element_size(); }
  int64_t storage_offset() const { return impl().offset; }
  TensorOptions options() const { return TensorOptions(impl().dtype); }
  Device device() const { return Device(DeviceType::CPU); }
  Layout layout() const { return Layout::Strided; }
  bool is_cuda() const { return false; }
  bool is_cpu() const { return true; }
  bool is_sparse() const { return false; }
  bool requires_grad() const { return false; }
  bool is_floating_point() const { return isFloatingType(impl().dtype); }
  bool is_complex() const { return isComplexType(impl().dtype); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  int64_t _version() const { return impl().storage->version; }
  // every in-place operation calls this before it writes: torch's error for a leaf requiring grad, else the bump
  void bump_version_() const {
    if (impl().leaf_guard)
      throw c10::Error(impl().leaf_guard == 1
                           ? "a leaf Variable that requires grad is being used in an in-place operation."
                           : "a view of a leaf Variable that requires grad is being used in an in-place operation.");
    ++impl().storage->version;
  }
  bool is_contiguous(MemoryFormat = MemoryFormat::Contiguous) const {
    int64_t expected = 1;
    for (int64_t d = dim() - 1; d >= 0; --d) {
      if (impl().sizes[d] == 1) continue;
      if (impl().strides[d] != expected) return false;
      expected *= impl().sizes[d];
    }
    return true;
  }
  std::string toString() const { return std::string("CPU") + c10::toString(scalar_type()) + "Type"; }

  // --- data --------------------------------------------------------------------------------------
  void* data_ptr() const { return impl().ptr(); }
  const void* const_data_ptr() const { return impl().ptr(); }
  void* mutable_data_ptr() const { return impl().ptr(); }
  template <class T> T* data_ptr() const {
    TORCH_CHECK(scalar_type() == CppTypeToScalarType<std::remove_cv_t<T>>::value, "expected scalar type ",
                CppTypeToScalarType<std::remove_cv_t<T>>::value, " but found ", scalar_type());
    return reinterpret_cast<T*>(impl().ptr());
  }
  template <class T> const T* const_data_ptr() const { return data_ptr<T>(); }
  template <class T> T* mutable_data_ptr() const { return data_ptr<T>(); }
  template <class T> T* data() const { return data_ptr<T>(); }
  template <class T, size_t N> TensorAccessor<T, N> accessor() const {
    static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
    TORCH_CHECK(dim() == static_cast<int64_t>(N), "TensorAccessor expected ", N, " dims but tensor has ", dim());
    return TensorAccessor<T, N>(data_ptr<T>(), impl().sizes.data(), impl().strides.data());
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> generic_packed_accessor() const {
    TORCH_CHECK(dim() == static_cast<int64_t>(N), "TensorAccessor expected ", N, " dims but tensor has ", dim());
    return GenericPackedTensorAccessor<T, N, PtrTraits, index_t>(
        static_cast<typename PtrTraits<T>::PtrType>(data_ptr<T>()), impl().sizes.data(), impl().strides.data());
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() const {
    TORCH_CHECK(numel() <= static_cast<int64_t>(std::numeric_limits<int32_t>::max()),
                "numel needs to be smaller than int32_t max; otherwise, please use packed_accessor64");
    return generic_packed_accessor<T, N, PtrTraits, int32_t>();
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() const {
    return generic_packed_accessor<T, N, PtrTraits, int64_t>();
  }
  template <class T> T item() const;
  Scalar item() const;

  // --- views (share the storage) ------------------------------------------------------------------
  Tensor as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> offset = std::nullopt) const {
    auto t = std::make_shared<fgx::TensorImpl>(impl());
    if (t->leaf_guard) t->leaf_guard = 2;  // (a view of a leaf requiring grad)
    t->sizes = size.vec();
    t->strides = stride.vec();
    if (offset) t->offset = *offset;
    return Tensor(t);
  }
  Tensor alias() const { return as_strided(sizes(), strides()); }
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef size) const { return is_contiguous() ? view(size) : contiguous().view(size); }
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor transpose(int64_t a, int64_t b) const {
    if (dim() == 0) return alias();
    a = fgx::wrap_dim(a, dim()); b = fgx::wrap_dim(b, dim());
    auto sz = sizes().vec(); auto st = strides().vec();
    std::swap(sz[a], sz[b]); std::swap(st[a], st[b]);
    return as_strided(sz, st);
  }
  Tensor t() const {
    TORCH_CHECK(dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
    return dim() < 2 ? alias() : transpose(0, 1);
  }
  Tensor permute(IntArrayRef dims) const {
    TORCH_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute(sparse_coo): number of dimensions in the tensor "
                "input does not match the length of the desired ordering of dimensions i.e. input.dim() = ", dim(),
                " is not equal to len(dims) = ", dims.size());
    std::vector<int64_t> sz, st;
    for (auto d : dims) { d = fgx::wrap_dim(d, dim()); sz.push_back(impl().sizes[d]); st.push_back(impl().strides[d]); }
    return as_strided(sz, st);
  }
  Tensor narrow(int64_t d, int64_t start, int64_t length) const {
    d = fgx::wrap_dim(d, dim());
    int64_t n = impl().sizes[d];
    if (start < 0) start += n;
    TORCH_CHECK(start >= 0 && length >= 0 && start + length <= n, "start (", start, ") + length (", length,
                ") exceeds dimension size (", n, ").");
    auto sz = sizes().vec();
    sz[d] = length;
    return as_strided(sz, strides(), impl().offset + start * impl().strides[d]);
  }
  Tensor slice(int64_t d = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const {
    d = fgx::wrap_dim(d, dim());
    TORCH_CHECK(step > 0, "slice step must be positive");
    int64_t n = impl().sizes[d];
    int64_t s = start.value_or(0), e = end.value_or(n);
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = std::min(std::max<int64_t>(s, 0), n);
    e = std::min(std::max<int64_t>(e, s), n);
    auto sz = sizes().vec(); auto st = strides().vec();
    sz[d] = (e - s + step - 1) / step;
    st[d] *= step;
    return as_strided(sz, st, impl().offset + s * impl().strides[d]);
  }
  Tensor select(int64_t d, int64_t i) const {
    TORCH_CHECK_INDEX(dim() > 0, "select() cannot be applied to a 0-dim tensor.");
    d = fgx::wrap_dim(d, dim());
    int64_t n = impl().sizes[d];
    TORCH_CHECK_INDEX(i >= -n && i < n, "select(): index ", i, " out of range for tensor of size ", sizes(),
                      " at dimension ", d);
    if (i < 0) i += n;
    auto sz = sizes().vec(); auto st = strides().vec();
    int64_t off = impl().offset + i * st[d];
    sz.erase(sz.begin() + d); st.erase(st.begin() + d);
    return as_strided(sz, st, off);
  }
  Tensor operator[](int64_t i) const { return select(0, i); }
  Tensor unsqueeze(int64_t d) const {
    d = fgx::wrap_dim(d, dim() + 1);
    auto sz = sizes().vec(); auto st = strides().vec();
    int64_t s = d < dim() ? sz[d] * st[d] : 1;
    sz.insert(sz.begin() + d, 1); st.insert(st.begin() + d, s);
    return as_strided(sz, st);
  }
  Tensor squeeze() const {
    std::vector<int64_t> sz, st;
    for (int64_t d = 0; d < dim(); ++d)
      if (impl().sizes[d] != 1) { sz.push_back(impl().sizes[d]); st.push_back(impl().strides[d]); }
    return as_strided(sz, st);
  }
  Tensor squeeze(int64_t d) const {
    if (dim() == 0) return alias();
    d = fgx::wrap_dim(d, dim());
    if (impl().sizes[d] != 1) return alias();
    auto sz = sizes().vec(); auto st = strides().vec();
    sz.erase(sz.begin() + d); st.erase(st.begin() + d);
    return as_strided(sz, st);
  }
  Tensor expand(IntArrayRef size) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  std::vector<Tensor> split(int64_t split_size, int64_t d = 0) const {
    d = fgx::wrap_dim(d, dim());
    TORCH_CHECK(split_size > 0 || size(d) == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ", size(d));
    std::vector<Tensor> out;
    for (int64_t s = 0; s < size(d); s += split_size) out.push_back(narrow(d, s, std::min(split_size, size(d) - s)));
    if (out.empty()) out.push_back(alias());
    return out;
  }
  std::vector<Tensor> chunk(int64_t chunks, int64_t d = 0) const {
    TORCH_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
    d = fgx::wrap_dim(d, dim());
    return split((size(d) + chunks - 1) / chunks, d);
  }
  std::vector<Tensor> unbind(int64_t d = 0) const {
    std::vector<Tensor> out;
    for (int64_t i = 0; i < size(d); ++i) out.push_back(select(d, i));
    return out;
  }

  // --- copies -------------------------------------------------------------------------------------
  Tensor contiguous(MemoryFormat = MemoryFormat::Contiguous) const { return is_contiguous() ? *this : clone(); }
  Tensor clone() const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor to(ScalarType t, bool non_blocking = false, bool copy = false) const;
  Tensor to(const TensorOptions& o, bool non_blocking = false, bool copy = false) const {
    return to(o.dtype().toScalarType(), non_blocking, copy);
  }
  Tensor to(Device, ScalarType t, bool non_blocking = false, bool copy = false) const { return to(t, non_blocking, copy); }
  Tensor to(Device, bool = false, bool copy = false) const { return copy ? clone() : *this; }
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const { return to(other.scalar_type(), non_blocking, copy); }
  Tensor type_as(const Tensor& other) const { return to(other.scalar_type()); }
  Tensor cpu() const { return *this; }
  Tensor detach() const {  // (shares the storage, outside autograd: in-place writes are allowed)
    auto t = std::make_shared<fgx::TensorImpl>(impl());
    t->leaf_guard = 0;
    return Tensor(t);
  }
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor& fill_(const Scalar& v);
  Tensor& zero_() { return fill_(0); }

  // --- arithmetic (defined below) -----------------------------------------------------------------
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(const Scalar& o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(const Scalar& o) const;
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& o, const Scalar& alpha = 1);
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& o, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& o);
  Tensor& mul_(const Scalar& o);
  Tensor& div_(const Tensor& o);
  Tensor& div_(const Scalar& o);
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(const Scalar& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(const Scalar& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(const Scalar& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(const Scalar& o) { return div_(o); }
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor pow(const Scalar& e) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(int64_t d, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const {
    return sum(IntArrayRef(d), keepdim, dtype);
  }
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(int64_t d, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const {
    return mean(IntArrayRef(d), keepdim, dtype);
  }
  Tensor mm(const Tensor& o) const;
  Tensor matmul(const Tensor& o) const;
  Tensor eq(const Tensor& o) const; Tensor eq(const Scalar& o) const;
  Tensor ne(const Tensor& o) const; Tensor ne(const Scalar& o) const;
  Tensor lt(const Tensor& o) const; Tensor lt(const Scalar& o) const;
  Tensor le(const Tensor& o) const; Tensor le(const Scalar& o) const;
  Tensor gt(const Tensor& o) const; Tensor gt(const Scalar& o) const;
  Tensor ge(const Tensor& o) const; Tensor ge(const Scalar& o) const;
  bool equal(const Tensor& o) const;
  bool allclose(const Tensor& o, double rtol = 1e-05, double atol = 1e-08) const;

  const fgx::TensorImpl& impl() const {
    if (!impl_) throw c10::Error("tensor does not have a device (an undefined Tensor was used)");
    return *impl_;
  }

 private:
  std::shared_ptr<fgx::TensorImpl> impl_;
};

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  return os << "[ CPU" << c10::toString(t.scalar_type()) << "Type{" << t.sizes() << "} ]";
}

}  // namespace at

// ------------------------------------------------------------------------------------------------
// Implementations: factories, elementwise loops, reductions, products
// ------------------------------------------------------------------------------------------------
namespace fgx {
using at::Tensor;
using c10::IntArrayRef;
using c10::ScalarType;

// Calls f(offsets) for every index of `shape`, offsets[k] being operand k's element offset
// (strides[k] are its strides, 0 along broadcast dimensions).
template <size_t K, class F>
void nd_for(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, K>& strides, F&& f) {
  int64_t n = numel_of(shape);
  if (n == 0) return;
  const size_t nd = shape.size();
  std::vector<int64_t> idx(nd, 0);
  std::array<int64_t, K> off{};
  if (nd == 0) { f(off); return; }
  const int64_t inner = shape[nd - 1];
  for (int64_t i = 0; i < n; i += inner) {
    std::array<int64_t, K> o = off;
    for (int64_t j = 0; j < inner; ++j) {
      f(o);
      for (size_t k = 0; k < K; ++k) o[k] += strides[k][nd - 1];
    }
    for (size_t d = nd - 1; d-- > 0;) {
      if (++idx[d] < shape[d]) { for (size_t k = 0; k < K; ++k) off[k] += strides[k][d]; break; }
      for (size_t k = 0; k < K; ++k) off[k] -= strides[k][d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}
inline std::vector<int64_t> broadcast_shape(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    TORCH_CHECK(x == y || x == 1 || y == 1, "The size of tensor a (", x, ") must match the size of tensor b (", y,
                ") at non-singleton dimension ", i);
    out[i] = x == 1 ? y : x;
  }
  return out;
}
// t's strides seen as a tensor of `shape` (0 where t is broadcast).
inline std::vector<int64_t> bcast_strides(const Tensor& t, const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 0);
  size_t lead = shape.size() - t.dim();
  for (size_t i = lead; i < shape.size(); ++i) s[i] = t.sizes()[i - lead] == 1 ? 0 : t.strides()[i - lead];
  return s;
}
inline Tensor make_tensor(std::shared_ptr<StorageImpl> st, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                          ScalarType dtype, int64_t offset = 0) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(st);
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->dtype = dtype;
  impl->offset = offset;
  return Tensor(impl);
}
// src's elements converted into dst (same shape after broadcasting src).
inline void cast_copy(const Tensor& dst, const Tensor& src) {
  std::vector<int64_t> shape = dst.sizes().vec();
  broadcast_shape(shape, src.sizes());
  std::array<std::vector<int64_t>, 2> st{dst.strides().vec(), bcast_strides(src, shape)};
  TORCH_CHECK(src.dim() <= dst.dim(), "expand: the number of sizes provided (", dst.dim(),
              ") must be greater or equal to the number of dimensions in the tensor (", src.dim(), ")");
  char* d = static_cast<char*>(dst.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  dispatch(dst.scalar_type(), [&](auto dt) {
    using D = typename decltype(dt)::type;
    dispatch(src.scalar_type(), [&](auto sti) {
      using S = typename decltype(sti)::type;
      D* dp = reinterpret_cast<D*>(d);
      const S* sp = reinterpret_cast<const S*>(s);
      nd_for<2>(shape, st, [&](const std::array<int64_t, 2>& o) { dp[o[0]] = static_cast<D>(sp[o[1]]); });
    });
  });
}
// torch's result type of a binary op: the higher category (bool < integer < floating) wins; within a
// category the tensor dtypes promote, a Python number (wrapped) only raises the category (to float32 /
// int64).
inline int category(ScalarType t) { return t == ScalarType::Bool ? 0 : c10::isIntegralType(t, false) ? 1 : 2; }
inline ScalarType promote(ScalarType a, ScalarType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) return (a == ScalarType::Double || b == ScalarType::Double) ? ScalarType::Double : ScalarType::Float;
  // integers: uint8 with a signed type goes to the next signed type that holds both
  auto rank = [](ScalarType t) { return t == ScalarType::Char ? 1 : t == ScalarType::Short ? 2 : t == ScalarType::Int ? 3 : t == ScalarType::Long ? 4 : 0; };
  if (a == ScalarType::Byte || b == ScalarType::Byte) {
    ScalarType o = a == ScalarType::Byte ? b : a;
    return rank(o) <= 1 ? ScalarType::Short : o;
  }
  return rank(a) > rank(b) ? a : b;
}
inline ScalarType promote_scalar(ScalarType t, const c10::Scalar& s) {
  int cs = s.isFloatingPoint() ? 2 : s.isBoolean() ? 0 : 1;
  if (cs <= category(t)) return t;
  return cs == 2 ? ScalarType::Float : ScalarType::Long;
}
inline Tensor scalar_tensor(const c10::Scalar& s, ScalarType t);

// out = op(a, b) elementwise over the broadcast shape, computed in `ct` and stored as `ct` (or as Bool
// for a comparison); with `out`, written into it (cast to its dtype).
template <bool Compare, class Op>
Tensor binary(const Tensor& a0, const Tensor& b0, ScalarType ct, Op op, const Tensor* out = nullptr) {
  Tensor a = a0.to(ct), b = b0.to(ct);
  std::vector<int64_t> shape = broadcast_shape(a.sizes(), b.sizes());
  ScalarType rt = Compare ? ScalarType::Bool : ct;
  Tensor r;
  if (out) {
    TORCH_CHECK(out->sizes() == IntArrayRef(shape), "output with shape ", out->sizes(),
                " doesn't match the broadcast shape ", IntArrayRef(shape));
    r = out->scalar_type() == rt ? *out : at::empty(shape, rt);
  } else {
    r = at::empty(shape, rt);
  }
  std::array<std::vector<int64_t>, 3> st{r.strides().vec(), bcast_strides(a, shape), bcast_strides(b, shape)};
  dispatch(ct, [&](auto ctag) {
    using T = typename decltype(ctag)::type;
    using R = std::conditional_t<Compare, bool, T>;
    const T* ap = static_cast<const T*>(a.data_ptr());
    const T* bp = static_cast<const T*>(b.data_ptr());
    R* rp = static_cast<R*>(r.data_ptr());
    nd_for<3>(shape, st, [&](const std::array<int64_t, 3>& o) { rp[o[0]] = static_cast<R>(op(ap[o[1]], bp[o[2]])); });
  });
  if (out && !r.is_same(*out)) fgx::cast_copy(*const_cast<Tensor*>(out), r);  // (the caller counted the write)
  return out ? *out : r;
}
// out = op(x) elementwise, computed and stored as `ct`.
template <class Op>
Tensor unary(const Tensor& x0, ScalarType ct, Op op) {
  Tensor x = x0.to(ct);
  Tensor r = at::empty(x.sizes(), ct);
  std::vector<int64_t> shape = x.sizes().vec();
  std::array<std::vector<int64_t>, 2> st{r.strides().vec(), x.strides().vec()};
  dispatch(ct, [&](auto ctag) {
    using T = typename decltype(ctag)::type;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* rp = static_cast<T*>(r.data_ptr());
    nd_for<2>(shape, st, [&](const std::array<int64_t, 2>& o) { rp[o[0]] = static_cast<T>(op(xp[o[1]])); });
  });
  return r;
}
inline ScalarType float_type(ScalarType t) { return c10::isFloatingType(t) ? t : ScalarType::Float; }
inline ScalarType arith_type(ScalarType a, ScalarType b, const char* name) {
  ScalarType t = promote(a, b);
  if (t == ScalarType::Bool && std::strcmp(name, "sub") == 0)
    throw c10::Error("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                     "`logical_xor()` operator instead.");
  return t;
}
}  // namespace fgx

namespace at {

inline Tensor empty(IntArrayRef size, TensorOptions options) {
  for (auto s : size) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  ScalarType t = options.dtype().toScalarType();
  TORCH_CHECK(!options.device().is_cuda(), "funcgrad's C++ extensions run on the CPU only (a CUDA tensor was asked for)");
  auto st = fgx::allocate(fgx::numel_of(size) * elementSize(t));
  return fgx::make_tensor(st, size.vec(), fgx::contiguous_strides(size), t);
}
inline Tensor full(IntArrayRef size, const Scalar& v, TensorOptions options = {}) {
  if (!options.has_dtype()) options = options.dtype(v.isFloatingPoint() ? kFloat : v.isBoolean() ? kBool : kLong);
  Tensor t = empty(size, options);
  t.fill_(v);
  return t;
}
inline Tensor zeros(IntArrayRef size, TensorOptions options = {}) {
  Tensor t = empty(size, options);
  std::memset(t.data_ptr(), 0, t.nbytes());
  return t;
}
inline Tensor ones(IntArrayRef size, TensorOptions options = {}) { return full(size, 1, options.dtype(options.dtype())); }
inline Tensor empty_like(const Tensor& t, TensorOptions options = {}) { return empty(t.sizes(), options.merge_in(t.options())); }
inline Tensor zeros_like(const Tensor& t, TensorOptions options = {}) { return zeros(t.sizes(), options.merge_in(t.options())); }
inline Tensor ones_like(const Tensor& t, TensorOptions options = {}) { return ones(t.sizes(), options.merge_in(t.options())); }
inline Tensor full_like(const Tensor& t, const Scalar& v, TensorOptions options = {}) {
  return full(t.sizes(), v, options.merge_in(t.options()));
}
inline Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options = {}) {
  bool fl = start.isFloatingPoint() || end.isFloatingPoint() || step.isFloatingPoint();
  if (!options.has_dtype()) options = options.dtype(fl ? kFloat : kLong);
  double s = start.toDouble(), e = end.toDouble(), d = step.toDouble();
  TORCH_CHECK(d != 0, "step must be nonzero");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((e - s) / d)));
  Tensor t = empty({n}, options);
  fgx::dispatch(t.scalar_type(), [&](auto tg) {
    using T = typename decltype(tg)::type;
    T* p = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(fl ? s + i * d : start.toLong() + i * step.toLong());
  });
  return t;
}
inline Tensor arange(const Scalar& end, TensorOptions options = {}) { return arange(0, end, 1, options); }
inline Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options = {}) { return arange(start, end, 1, options); }
// A tensor over memory the caller owns (it must outlive the tensor and its views).
inline Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {}) {
  auto st = std::make_shared<fgx::StorageImpl>();
  st->data = data;
  return fgx::make_tensor(st, sizes.vec(), strides.vec(), options.dtype().toScalarType());
}
inline Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {}) {
  return from_blob(data, sizes, fgx::contiguous_strides(sizes), options);
}
inline Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, const TensorOptions& options = {}) {
  Tensor t = from_blob(data, sizes, options);
  t.unsafeGetTensorImpl()->storage->deleter = std::move(deleter);
  return t;
}
inline Tensor scalar_tensor(const Scalar& s, TensorOptions options = {}) {
  return full({}, s, options.has_dtype() ? options : options.dtype(s.isFloatingPoint() ? kDouble : s.isBoolean() ? kBool : kLong));
}

inline Tensor Tensor::view(IntArrayRef size) const {
  std::vector<int64_t> sz = size.vec();
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sz.size(); ++i) {
    if (sz[i] == -1) { TORCH_CHECK(infer < 0, "only one dimension can be inferred"); infer = i; }
    else known *= sz[i];
  }
  if (infer >= 0) {
    TORCH_CHECK(known != 0 && numel() % known == 0, "shape '", size, "' is invalid for input of size ", numel());
    sz[infer] = numel() / known;
  }
  TORCH_CHECK(fgx::numel_of(sz) == numel(), "shape '", size, "' is invalid for input of size ", numel());
  TORCH_CHECK(is_contiguous(), "view size is not compatible with input tensor's size and stride (at least one dimension "
              "spans across two contiguous subspaces). Use .reshape(...) instead.");
  return as_strided(sz, fgx::contiguous_strides(sz));
}
inline Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (dim() == 0) return reshape({1});
  start = fgx::wrap_dim(start, dim()); end = fgx::wrap_dim(end, dim());
  std::vector<int64_t> sz(sizes().begin(), sizes().begin() + start);
  int64_t m = 1;
  for (int64_t d = start; d <= end; ++d) m *= size(d);
  sz.push_back(m);
  sz.insert(sz.end(), sizes().begin() + end + 1, sizes().end());
  return reshape(sz);
}
inline Tensor Tensor::expand(IntArrayRef size) const {
  TORCH_CHECK(static_cast<int64_t>(size.size()) >= dim(), "expand(torch.FloatTensor{", sizes(), "}, size=", size,
              "): the number of sizes provided (", size.size(), ") must be greater or equal to the number of "
              "dimensions in the tensor (", dim(), ")");
  std::vector<int64_t> sz = size.vec(), st(size.size(), 0);
  size_t lead = size.size() - dim();
  for (size_t i = 0; i < size.size(); ++i) {
    if (i < lead) { TORCH_CHECK(sz[i] >= 0, "expand: -1 not allowed in a leading, non-existing dimension"); continue; }
    int64_t have = impl().sizes[i - lead];
    if (sz[i] == -1) sz[i] = have;
    TORCH_CHECK(have == sz[i] || have == 1, "The expanded size of the tensor (", sz[i], ") must match the existing size (",
                have, ") at non-singleton dimension ", i, ".  Target sizes: ", size, ".  Tensor sizes: ", sizes());
    st[i] = have == 1 && sz[i] != 1 ? 0 : impl().strides[i - lead];
  }
  return as_strided(sz, st);
}
inline Tensor Tensor::clone() const {
  Tensor r = empty(sizes(), scalar_type());
  fgx::cast_copy(r, *this);
  return r;
}
inline Tensor& Tensor::copy_(const Tensor& src, bool) {
  bump_version_();
  fgx::cast_copy(*this, src);
  return *this;
}
inline Tensor Tensor::to(ScalarType t, bool, bool copy) const {
  if (t == scalar_type()) return copy ? clone() : *this;
  Tensor r = empty(sizes(), t);
  fgx::cast_copy(r, *this);
  return r;
}
inline Tensor& Tensor::fill_(const Scalar& v) {
  bump_version_();
  fgx::dispatch(scalar_type(), [&](auto tg) {
    using T = typename decltype(tg)::type;
    T x = v.to<T>();
    T* p = static_cast<T*>(data_ptr());
    std::array<std::vector<int64_t>, 1> st{strides().vec()};
    fgx::nd_for<1>(sizes().vec(), st, [&](const std::array<int64_t, 1>& o) { p[o[0]] = x; });
  });
  return *this;
}
template <class T> T Tensor::item() const {
  TORCH_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  return fgx::dispatch(scalar_type(), [&](auto tg) -> T {
    using S = typename decltype(tg)::type;
    return static_cast<T>(*static_cast<const S*>(data_ptr()));
  });
}
inline Scalar Tensor::item() const {
  if (is_floating_point()) return Scalar(item<double>());
  if (scalar_type() == kBool) return Scalar(item<bool>());
  return Scalar(item<int64_t>());
}

namespace fgx_ops {
struct Add { double a; template <class T> T operator()(T x, T y) const { return static_cast<T>(x + static_cast<T>(a) * y); } };
struct Sub { double a; template <class T> T operator()(T x, T y) const { return static_cast<T>(x - static_cast<T>(a) * y); } };
struct Mul { template <class T> T operator()(T x, T y) const { return static_cast<T>(x * y); } };
struct Div { template <class T> T operator()(T x, T y) const { return static_cast<T>(x / y); } };
}  // namespace fgx_ops

inline Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const {
  auto t = fgx::arith_type(scalar_type(), o.scalar_type(), "add");
  return fgx::binary<false>(*this, o, t, fgx_ops::Add{alpha.toDouble()});
}
inline Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const {
  auto t = fgx::arith_type(scalar_type(), o.scalar_type(), "sub");
  return fgx::binary<false>(*this, o, t, fgx_ops::Sub{alpha.toDouble()});
}
inline Tensor Tensor::mul(const Tensor& o) const {
  auto t = fgx::arith_type(scalar_type(), o.scalar_type(), "mul");
  return fgx::binary<false>(*this, o, t, fgx_ops::Mul{});
}
inline Tensor Tensor::div(const Tensor& o) const {
  auto t = fgx::float_type(fgx::promote(scalar_type(), o.scalar_type()));
  return fgx::binary<false>(*this, o, t, fgx_ops::Div{});
}
inline Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const {
  return add(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o)), alpha);
}
inline Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const {
  return sub(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o)), alpha);
}
inline Tensor Tensor::mul(const Scalar& o) const { return mul(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o))); }
inline Tensor Tensor::div(const Scalar& o) const { return div(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o))); }

// In-place forms: computed in the promoted type and cast back to self's dtype, which must hold the
// result's category (torch's "result type Float can't be cast to the desired output type Long").
inline void check_inplace(ScalarType self, ScalarType result) {
  TORCH_CHECK(fgx::category(result) <= fgx::category(self), "result type ", result,
              " can't be cast to the desired output type ", self);
}
inline Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  auto t = fgx::arith_type(scalar_type(), o.scalar_type(), "add");
  check_inplace(scalar_type(), t);
  bump_version_();
  fgx::binary<false>(*this, o, t, fgx_ops::Add{alpha.toDouble()}, this);
  return *this;
}
inline Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  auto t = fgx::arith_type(scalar_type(), o.scalar_type(), "sub");
  check_inplace(scalar_type(), t);
  bump_version_();
  fgx::binary<false>(*this, o, t, fgx_ops::Sub{alpha.toDouble()}, this);
  return *this;
}
inline Tensor& Tensor::mul_(const Tensor& o) {
  auto t = fgx::arith_type(scalar_type(), o.scalar_type(), "mul");
  check_inplace(scalar_type(), t);
  bump_version_();
  fgx::binary<false>(*this, o, t, fgx_ops::Mul{}, this);
  return *this;
}
inline Tensor& Tensor::div_(const Tensor& o) {
  auto t = fgx::float_type(fgx::promote(scalar_type(), o.scalar_type()));
  check_inplace(scalar_type(), t);
  bump_version_();
  fgx::binary<false>(*this, o, t, fgx_ops::Div{}, this);
  return *this;
}
inline Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) { return add_(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o)), alpha); }
inline Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) { return sub_(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o)), alpha); }
inline Tensor& Tensor::mul_(const Scalar& o) { return mul_(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o))); }
inline Tensor& Tensor::div_(const Scalar& o) { return div_(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o))); }

inline Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return a.add(b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return b.add(a); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return a.sub(b); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return fgx::scalar_tensor(a, fgx::promote_scalar(b.scalar_type(), a)).sub(b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return a.mul(b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return b.mul(a); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return a.div(b); }
inline Tensor operator/(const Scalar& a, const Tensor& b) { return fgx::scalar_tensor(a, fgx::promote_scalar(b.scalar_type(), a)).div(b); }
inline Tensor operator-(const Tensor& a) { return a.neg(); }

#define FGX_COMPARE(NAME, OP)                                                                            \
  inline Tensor Tensor::NAME(const Tensor& o) const {                                                    \
    return fgx::binary<true>(*this, o, fgx::promote(scalar_type(), o.scalar_type()),                      \
                             [](auto x, auto y) { return x OP y; });                                     \
  }                                                                                                      \
  inline Tensor Tensor::NAME(const Scalar& o) const {                                                    \
    return NAME(fgx::scalar_tensor(o, fgx::promote_scalar(scalar_type(), o)));                           \
  }                                                                                                      \
  inline Tensor operator OP(const Tensor& a, const Tensor& b) { return a.NAME(b); }                      \
  inline Tensor operator OP(const Tensor& a, const Scalar& b) { return a.NAME(b); }
FGX_COMPARE(eq, ==) FGX_COMPARE(ne, !=) FGX_COMPARE(lt, <) FGX_COMPARE(le, <=) FGX_COMPARE(gt, >) FGX_COMPARE(ge, >=)
#undef FGX_COMPARE
inline Tensor operator<(const Scalar& a, const Tensor& b) { return b.gt(a); }
inline Tensor operator>(const Scalar& a, const Tensor& b) { return b.lt(a); }

inline Tensor Tensor::neg() const {
  TORCH_CHECK(scalar_type() != kBool, "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
              "to invert a mask, use the `~` or `logical_not()` operator instead.");
  return fgx::unary(*this, scalar_type(), [](auto x) { return -x; });
}
inline Tensor Tensor::abs() const {
  return fgx::unary(*this, scalar_type(), [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_unsigned<T>::value) return x;
    else return x < 0 ? static_cast<T>(-x) : x;
  });
}
inline Tensor Tensor::relu() const {
  return fgx::unary(*this, scalar_type(), [](auto x) { return x > 0 ? x : decltype(x)(0); });
}
#define FGX_UNARY_FLOAT(NAME, EXPR) \
  inline Tensor Tensor::NAME() const { return fgx::unary(*this, fgx::float_type(scalar_type()), [](auto x) { return EXPR; }); }
FGX_UNARY_FLOAT(exp, std::exp(x)) FGX_UNARY_FLOAT(log, std::log(x)) FGX_UNARY_FLOAT(sqrt, std::sqrt(x))
FGX_UNARY_FLOAT(rsqrt, decltype(x)(1) / std::sqrt(x)) FGX_UNARY_FLOAT(sin, std::sin(x)) FGX_UNARY_FLOAT(cos, std::cos(x))
FGX_UNARY_FLOAT(tanh, std::tanh(x)) FGX_UNARY_FLOAT(sigmoid, decltype(x)(1) / (decltype(x)(1) + std::exp(-x)))
#undef FGX_UNARY_FLOAT
inline Tensor Tensor::pow(const Scalar& e) const {
  ScalarType t = fgx::promote_scalar(scalar_type(), e);
  if (isFloatingType(t)) {
    double ed = e.toDouble();
    return fgx::unary(*this, t, [ed](auto x) { return std::pow(x, static_cast<decltype(x)>(ed)); });
  }
  int64_t ei = e.toLong();
  TORCH_CHECK(ei >= 0, "Integers to negative integer powers are not allowed.");
  return fgx::unary(*this, t, [ei](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same<T, bool>::value) return ei == 0 || x;
    else { T r = 1; for (int64_t i = 0; i < ei; ++i) r = static_cast<T>(r * x); return r; }
  });
}
inline Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  TORCH_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  double l = lo ? lo->toDouble() : -INFINITY, h = hi ? hi->toDouble() : INFINITY;
  return fgx::unary(*this, scalar_type(), [l, h](auto x) {
    using T = decltype(x);
    if (x != x) return x;
    return static_cast<double>(x) < l ? static_cast<T>(l) : static_cast<double>(x) > h ? static_cast<T>(h) : x;
  });
}

// Sums over `dims` (accumulated in double for floating types, int64 for integers and bool).
inline Tensor Tensor::sum(IntArrayRef dims0, bool keepdim, std::optional<ScalarType> dtype) const {
  ScalarType rt = dtype ? *dtype : isFloatingType(scalar_type()) ? scalar_type() : kLong;
  std::vector<bool> red(std::max<int64_t>(dim(), 1), dims0.empty());
  for (auto d : dims0) {
    d = fgx::wrap_dim(d, dim());
    TORCH_CHECK(!red[d] || dims0.empty(), "dim ", d, " appears multiple times in the list of dims");
    red[d] = true;
  }
  std::vector<int64_t> outer, rsz, keep, ost, ist;
  for (int64_t d = 0; d < dim(); ++d) {
    if (red[d]) { rsz.push_back(size(d)); ist.push_back(stride(d)); keep.push_back(1); }
    else { outer.push_back(size(d)); ost.push_back(stride(d)); keep.push_back(size(d)); }
  }
  Tensor src = to(isFloatingType(rt) ? kDouble : kLong);
  std::vector<int64_t> src_ost, src_ist;
  for (int64_t d = 0; d < dim(); ++d) (red[d] ? src_ist : src_ost).push_back(src.stride(d));
  Tensor acc = zeros(outer, src.scalar_type());
  fgx::dispatch(src.scalar_type(), [&](auto tg) {
    using A = typename decltype(tg)::type;
    A* ap = static_cast<A*>(acc.data_ptr());
    const A* sp = static_cast<const A*>(src.data_ptr());
    std::array<std::vector<int64_t>, 2> so{acc.strides().vec(), src_ost};
    std::array<std::vector<int64_t>, 1> si{src_ist};
    fgx::nd_for<2>(outer, so, [&](const std::array<int64_t, 2>& o) {
      A s = 0;
      fgx::nd_for<1>(rsz, si, [&](const std::array<int64_t, 1>& i) { s += sp[o[1] + i[0]]; });
      ap[o[0]] = s;
    });
  });
  Tensor out = acc.to(rt);
  return keepdim ? out.view(keep) : out;
}
inline Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return sum(IntArrayRef(), false, dtype); }
inline Tensor Tensor::mean(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  ScalarType rt = dtype ? *dtype : scalar_type();
  TORCH_CHECK(isFloatingType(rt), "mean(): could not infer output dtype. Input dtype must be either a floating point or "
              "complex dtype. Got: ", rt);
  int64_t n = 1;
  if (dims.empty()) n = numel();
  for (auto d : dims) n *= size(d);
  return sum(dims, keepdim, kDouble).div(static_cast<double>(n)).to(rt);
}
inline Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return mean(IntArrayRef(), false, dtype); }

inline Tensor mm(const Tensor& a, const Tensor& b) {
  TORCH_CHECK(a.dim() == 2, "self must be a matrix");
  TORCH_CHECK(b.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1), " and ",
              b.size(0), "x", b.size(1), ")");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected m1 and m2 to have the same dtype, but got: ",
              a.dtype(), " != ", b.dtype());
  int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  Tensor r = zeros({n, m}, a.scalar_type());
  Tensor bc = b.contiguous();
  fgx::dispatch(a.scalar_type(), [&](auto tg) {
    using T = typename decltype(tg)::type;
    const T* ap = static_cast<const T*>(a.data_ptr());
    const T* bp = static_cast<const T*>(bc.data_ptr());
    T* rp = static_cast<T*>(r.data_ptr());
    int64_t s0 = a.stride(0), s1 = a.stride(1);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < k; ++p) {
        T x = ap[i * s0 + p * s1];
        const T* brow = bp + p * m;
        T* rrow = rp + i * m;
        for (int64_t j = 0; j < m; ++j) rrow[j] = static_cast<T>(rrow[j] + x * brow[j]);
      }
  });
  return r;
}
inline Tensor Tensor::mm(const Tensor& o) const { return at::mm(*this, o); }
inline Tensor matmul(const Tensor& a, const Tensor& b) {
  if (a.dim() == 2 && b.dim() == 2) return mm(a, b);
  if (a.dim() == 1 && b.dim() == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (a.dim() == 2 && b.dim() == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (a.dim() == 1 && b.dim() == 1) return mm(a.unsqueeze(0), b.unsqueeze(1)).view(IntArrayRef());
  throw c10::NotImplementedError("funcgrad's torch/extension.h: matmul supports 1-D and 2-D operands only");
}
inline Tensor Tensor::matmul(const Tensor& o) const { return at::matmul(*this, o); }
inline Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1, const Scalar& alpha = 1) {
  Tensor p = mm(m1, m2);
  if (alpha.toDouble() != 1) p = p.mul(alpha);
  if (beta.toDouble() == 0) return p;
  return (beta.toDouble() == 1 ? self : self.mul(beta)).add(p);
}
inline Tensor cat(TensorList tensors, int64_t d = 0) {
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor& first = tensors[0];
  d = fgx::wrap_dim(d, first.dim());
  ScalarType t = first.scalar_type();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& x = tensors[i];
    TORCH_CHECK(x.dim() == first.dim(), "Tensors must have same number of dimensions: got ", first.dim(), " and ", x.dim());
    for (int64_t e = 0; e < x.dim(); ++e)
      TORCH_CHECK(e == d || x.size(e) == first.size(e), "Sizes of tensors must match except in dimension ", d,
                  ". Expected size ", first.size(e), " but got size ", x.size(e), " for tensor number ", i, " in the list.");
    t = fgx::promote(t, x.scalar_type());
    total += x.size(d);
  }
  std::vector<int64_t> sz = first.sizes().vec();
  sz[d] = total;
  Tensor r = empty(sz, t);
  int64_t off = 0;
  for (const Tensor& x : tensors) { r.narrow(d, off, x.size(d)).copy_(x); off += x.size(d); }
  return r;
}
inline Tensor stack(TensorList tensors, int64_t d = 0) {
  TORCH_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  std::vector<Tensor> u;
  for (const Tensor& x : tensors) u.push_back(x.unsqueeze(d));
  return cat(u, d);
}
inline bool Tensor::equal(const Tensor& o) const {
  if (sizes() != o.sizes()) return false;
  return ne(o).sum().item<int64_t>() == 0;
}
inline bool Tensor::allclose(const Tensor& o, double rtol, double atol) const {
  Tensor a = to(kDouble), b = o.to(kDouble);
  Tensor bad = fgx::binary<true>(a, b, kDouble, [rtol, atol](double x, double y) {
    return !(std::abs(x - y) <= atol + rtol * std::abs(y) || x == y);
  });
  return bad.sum().item<int64_t>() == 0;
}

#define FGX_FREE_UNARY(NAME) inline Tensor NAME(const Tensor& x) { return x.NAME(); }
FGX_FREE_UNARY(neg) FGX_FREE_UNARY(abs) FGX_FREE_UNARY(exp) FGX_FREE_UNARY(log) FGX_FREE_UNARY(sqrt) FGX_FREE_UNARY(rsqrt)
FGX_FREE_UNARY(sin) FGX_FREE_UNARY(cos) FGX_FREE_UNARY(tanh) FGX_FREE_UNARY(sigmoid) FGX_FREE_UNARY(relu)
#undef FGX_FREE_UNARY
inline Tensor elu(const Tensor& x, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1) {
  double a = alpha.toDouble(), s = scale.toDouble(), is = input_scale.toDouble();
  TORCH_CHECK(x.is_floating_point(), "\"elu_cpu\" not implemented for '", x.scalar_type(), "'");
  return fgx::unary(x, x.scalar_type(), [a, s, is](auto v) {
    using T = decltype(v);
    return v > 0 ? static_cast<T>(s * v) : static_cast<T>(s * a * (std::exp(is * v) - 1));
  });
}
inline Tensor pow(const Tensor& x, const Scalar& e) { return x.pow(e); }
inline Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt) { return x.clamp(lo, hi); }
inline Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1) { return a.add(b, alpha); }
inline Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1) { return a.sub(b, alpha); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return a.mul(b); }
inline Tensor div(const Tensor& a, const Tensor& b) { return a.div(b); }
inline Tensor sum(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt) { return x.sum(dtype); }
inline Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim = false) { return x.sum(dims, keepdim); }
inline Tensor mean(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt) { return x.mean(dtype); }
inline Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim = false) { return x.mean(dims, keepdim); }
inline Tensor transpose(const Tensor& x, int64_t a, int64_t b) { return x.transpose(a, b); }
inline Tensor reshape(const Tensor& x, IntArrayRef s) { return x.reshape(s); }
inline std::vector<Tensor> chunk(const Tensor& x, int64_t c, int64_t d = 0) { return x.chunk(c, d); }

}  // namespace at

namespace fgx {
inline Tensor scalar_tensor(const c10::Scalar& s, ScalarType t) { return at::full({}, s, t); }
}  // namespace fgx

namespace torch {
using namespace at;
using Dtype = at::ScalarType;
using at::Tensor;
// torch::wrap_pybind_function(f) (what load_inline's bindings call): errors are translated anyway.
template <class F> F wrap_pybind_function(F f) { return f; }
template <class F> F wrap_pybind_function_no_gil(F f) { return f; }
}  // namespace torch

// ------------------------------------------------------------------------------------------------
// AT_DISPATCH_*: run the lambda with scalar_t bound to the tensor's C++ element type
// ------------------------------------------------------------------------------------------------
#define FGX_DISPATCH_CASE(ENUM, CTYPE, ...) \
  case ::c10::ScalarType::ENUM: { using scalar_t = CTYPE; return __VA_ARGS__(); }
#define FGX_FLOAT_CASES(...) FGX_DISPATCH_CASE(Double, double, __VA_ARGS__) FGX_DISPATCH_CASE(Float, float, __VA_ARGS__)
#define FGX_INT_CASES(...) FGX_DISPATCH_CASE(Byte, uint8_t, __VA_ARGS__) FGX_DISPATCH_CASE(Char, int8_t, __VA_ARGS__) \
  FGX_DISPATCH_CASE(Short, int16_t, __VA_ARGS__) FGX_DISPATCH_CASE(Int, int32_t, __VA_ARGS__) \
  FGX_DISPATCH_CASE(Long, int64_t, __VA_ARGS__)
#define FGX_DISPATCH(TYPE, NAME, CASES) \
  [&] { \
    const auto fgx_st_ = ::fgx::to_st(TYPE); \
    switch (fgx_st_) { CASES default: ::fgx::dispatch_fail(NAME, fgx_st_); } \
  }()
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) FGX_DISPATCH(TYPE, NAME, FGX_FLOAT_CASES(__VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) FGX_DISPATCH(TYPE, NAME, FGX_INT_CASES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) FGX_DISPATCH(TYPE, NAME, FGX_FLOAT_CASES(__VA_ARGS__) FGX_INT_CASES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND_BOOL(TYPE, NAME, ...) \
  FGX_DISPATCH(TYPE, NAME, FGX_FLOAT_CASES(__VA_ARGS__) FGX_INT_CASES(__VA_ARGS__) FGX_DISPATCH_CASE(Bool, bool, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, __VA_ARGS__)

// ------------------------------------------------------------------------------------------------
// Bindings: PYBIND11_MODULE and m.def without pybind11. Each m.def'd callable gets an invoker that
// converts the C-ABI arguments funcgrad passes into its C++ parameter types and its result into a
// Value tree funcgrad reads back; the signature (names, types, defaults) is read from the C++ types.
// ------------------------------------------------------------------------------------------------
extern "C" {
// One argument as funcgrad passes it (kinds: 0 None, 1 tensor, 2 int, 3 float, 4 bool, 5 list, 6 str, 7 dtype).
struct fgx_arg {
  int64_t kind;
  int64_t ival;       // int / bool value, list length, tensor or dtype scalar type code
  double dval;
  void* data;         // tensor data, list items (fgx_arg*), or str (char*)
  int64_t ndim;
  const int64_t* sizes;
  const int64_t* strides;  // in elements
  int64_t pin;        // tensor: the id funcgrad releases when the last C++ reference to the buffer dies
  int64_t flags;      // tensor: 1 a leaf that requires grad (grad mode on), 2 a view of one (TensorImpl::leaf_guard)
};                    // (a tensor's dval is its Python tensor's version counter)
typedef void (*fgx_release_fn)(int64_t);
typedef void (*fgx_bump_fn)(int64_t pin, int64_t count);  // C++ wrote `count` times in place into argument `pin`
}

namespace fgx {
enum Kind : int64_t { K_NONE = 0, K_TENSOR = 1, K_INT = 2, K_FLOAT = 3, K_BOOL = 4, K_LIST = 5, K_STR = 6, K_DTYPE = 7, K_TUPLE = 8 };
struct CallCtx {
  fgx_release_fn release;
  const std::atomic<bool>* shutdown;
  // the tensor arguments' storages and their versions on entry, for the version bumps reported after the call
  std::vector<std::tuple<int64_t, std::shared_ptr<StorageImpl>, int64_t>>* args = nullptr;
};
// Reports, when the call ends (returned or threw), how many in-place writes C++ made into each tensor argument.
struct BumpReport {
  fgx_bump_fn bump;
  std::vector<std::tuple<int64_t, std::shared_ptr<StorageImpl>, int64_t>> args;
  ~BumpReport() {
    if (!bump) return;
    for (auto& a : args)
      if (std::get<1>(a)->version != std::get<2>(a)) bump(std::get<0>(a), std::get<1>(a)->version - std::get<2>(a));
  }
};
struct bad_argument {};

struct Value {
  int64_t kind = K_NONE;
  at::Tensor t;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::vector<std::unique_ptr<Value>> items;
};

template <class T, class = void> struct caster {
  static_assert(sizeof(T) == 0, "funcgrad's torch/extension.h cannot bind a parameter of this type (supported: "
                "Tensor, int types, float/double, bool, std::string, c10::Scalar, c10::ScalarType, IntArrayRef, "
                "std::vector<T> and std::optional<T> of these)");
};
template <> struct caster<at::Tensor> {
  at::Tensor v;
  static std::string pyname() { return "torch.Tensor"; }
  static std::string schema() { return "Tensor"; }
  bool load(const fgx_arg& a, const CallCtx& c) {
    if (a.kind != K_TENSOR) return false;
    auto st = std::make_shared<StorageImpl>();
    st->data = a.data;
    int64_t pin = a.pin;
    fgx_release_fn rel = c.release;
    const std::atomic<bool>* down = c.shutdown;
    if (rel) st->deleter = [rel, pin, down](void*) { if (!down->load()) rel(pin); };
    st->version = static_cast<int64_t>(a.dval);
    if (c.args) c.args->emplace_back(pin, st, st->version);
    std::vector<int64_t> sz(a.sizes, a.sizes + a.ndim), sd(a.strides, a.strides + a.ndim);
    v = make_tensor(st, sz, sd, static_cast<c10::ScalarType>(a.ival));
    v.unsafeGetTensorImpl()->leaf_guard = static_cast<int8_t>(a.flags);
    return true;
  }
  at::Tensor& get() { return v; }
};
template <class T> struct caster<T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value>> {
  T v{};
  static std::string pyname() { return "int"; }
  static std::string schema() { return "int"; }
  bool load(const fgx_arg& a, const CallCtx&) {
    if (a.kind != K_INT && a.kind != K_BOOL) return false;
    v = static_cast<T>(a.ival);
    return true;
  }
  T& get() { return v; }
};
template <class T> struct caster<T, std::enable_if_t<std::is_floating_point<T>::value>> {
  T v{};
  static std::string pyname() { return "float"; }
  static std::string schema() { return "float"; }
  bool load(const fgx_arg& a, const CallCtx&) {
    if (a.kind == K_FLOAT) v = static_cast<T>(a.dval);
    else if (a.kind == K_INT || a.kind == K_BOOL) v = static_cast<T>(a.ival);
    else return false;
    return true;
  }
  T& get() { return v; }
};
template <> struct caster<bool> {
  bool v = false;
  static std::string pyname() { return "bool"; }
  static std::string schema() { return "bool"; }
  bool load(const fgx_arg& a, const CallCtx&) {
    if (a.kind != K_BOOL) return false;
    v = a.ival != 0;
    return true;
  }
  bool& get() { return v; }
};
template <> struct caster<std::string> {
  std::string v;
  static std::string pyname() { return "str"; }
  static std::string schema() { return "str"; }
  bool load(const fgx_arg& a, const CallCtx&) {
    if (a.kind != K_STR) return false;
    v = static_cast<const char*>(a.data);
    return true;
  }
  std::string& get() { return v; }
};
template <> struct caster<c10::Scalar> {
  c10::Scalar v;
  static std::string pyname() { return "typing.Union[float, int, bool]"; }
  static std::string schema() { return "Scalar"; }
  bool load(const fgx_arg& a, const CallCtx&) {
    if (a.kind == K_FLOAT) v = c10::Scalar(a.dval);
    else if (a.kind == K_INT) v = c10::Scalar(a.ival);
    else if (a.kind == K_BOOL) v = c10::Scalar(a.ival != 0);
    else return false;
    return true;
  }
  c10::Scalar& get() { return v; }
};
template <> struct caster<c10::ScalarType> {
  c10::ScalarType v = c10::ScalarType::Float;
  static std::string pyname() { return "torch.dtype"; }
  static std::string schema() { return "ScalarType"; }
  bool load(const fgx_arg& a, const CallCtx&) {
    if (a.kind != K_DTYPE) return false;
    v = static_cast<c10::ScalarType>(a.ival);
    return true;
  }
  c10::ScalarType& get() { return v; }
};
template <class T> struct caster<std::vector<T>> {
  std::vector<T> v;
  static std::string pyname() { return "list[" + caster<T>::pyname() + "]"; }
  static std::string schema() { return caster<T>::schema() + "[]"; }
  bool load(const fgx_arg& a, const CallCtx& c) {
    if (a.kind != K_LIST) return false;
    const fgx_arg* items = static_cast<const fgx_arg*>(a.data);
    v.clear();
    for (int64_t i = 0; i < a.ival; ++i) {
      caster<T> e;
      if (!e.load(items[i], c)) return false;
      v.push_back(std::move(e.get()));
    }
    return true;
  }
  std::vector<T>& get() { return v; }
};
template <class T> struct caster<c10::ArrayRef<T>> {
  caster<std::vector<T>> inner;
  static std::string pyname() { return caster<std::vector<T>>::pyname(); }
  static std::string schema() { return caster<std::vector<T>>::schema(); }
  bool load(const fgx_arg& a, const CallCtx& c) { return inner.load(a, c); }
  c10::ArrayRef<T> get() { return c10::ArrayRef<T>(inner.get()); }
};
template <class T> struct caster<std::optional<T>> {
  std::optional<T> v;
  caster<T> inner;
  static std::string pyname() { return "typing.Optional[" + caster<T>::pyname() + "]"; }
  static std::string schema() { return caster<T>::schema() + "?"; }
  bool load(const fgx_arg& a, const CallCtx& c) {
    if (a.kind == K_NONE) { v = std::nullopt; return true; }
    if (!inner.load(a, c)) return false;
    v = inner.get();
    return true;
  }
  std::optional<T>& get() { return v; }
};

template <class T, class = void> struct ret {
  static_assert(sizeof(T) == 0, "funcgrad's torch/extension.h cannot return this type (supported: Tensor, "
                "numbers, bool, std::string, std::vector, std::tuple, std::pair, std::optional, void)");
};
template <> struct ret<at::Tensor> {
  static std::string pyname() { return "torch.Tensor"; }
  static std::string schema() { return "Tensor"; }
  static std::unique_ptr<Value> make(const at::Tensor& t) {
    auto v = std::make_unique<Value>();
    if (t.defined()) { v->kind = K_TENSOR; v->t = t; }
    return v;
  }
};
template <class T> struct ret<T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value>> {
  static std::string pyname() { return "int"; }
  static std::string schema() { return "int"; }
  static std::unique_ptr<Value> make(T x) { auto v = std::make_unique<Value>(); v->kind = K_INT; v->i = static_cast<int64_t>(x); return v; }
};
template <class T> struct ret<T, std::enable_if_t<std::is_floating_point<T>::value>> {
  static std::string pyname() { return "float"; }
  static std::string schema() { return "float"; }
  static std::unique_ptr<Value> make(T x) { auto v = std::make_unique<Value>(); v->kind = K_FLOAT; v->d = static_cast<double>(x); return v; }
};
template <> struct ret<bool> {
  static std::string pyname() { return "bool"; }
  static std::string schema() { return "bool"; }
  static std::unique_ptr<Value> make(bool x) { auto v = std::make_unique<Value>(); v->kind = K_BOOL; v->i = x; return v; }
};
template <> struct ret<std::string> {
  static std::string pyname() { return "str"; }
  static std::string schema() { return "str"; }
  static std::unique_ptr<Value> make(const std::string& x) { auto v = std::make_unique<Value>(); v->kind = K_STR; v->s = x; return v; }
};
template <> struct ret<c10::Scalar> {
  static std::string pyname() { return "typing.Union[float, int, bool]"; }
  static std::string schema() { return "Scalar"; }
  static std::unique_ptr<Value> make(const c10::Scalar& x) {
    if (x.isFloatingPoint()) return ret<double>::make(x.toDouble());
    if (x.isBoolean()) return ret<bool>::make(x.toBool());
    return ret<int64_t>::make(x.toLong());
  }
};
template <class T> struct ret<std::vector<T>> {
  static std::string pyname() { return "list[" + ret<T>::pyname() + "]"; }
  static std::string schema() { return ret<T>::schema() + "[]"; }
  static std::unique_ptr<Value> make(const std::vector<T>& x) {
    auto v = std::make_unique<Value>();
    v->kind = K_LIST;
    for (const auto& e : x) v->items.push_back(ret<T>::make(e));
    return v;
  }
};
template <class T> struct ret<std::optional<T>> {
  static std::string pyname() { return "typing.Optional[" + ret<T>::pyname() + "]"; }
  static std::string schema() { return ret<T>::schema() + "?"; }
  static std::unique_ptr<Value> make(const std::optional<T>& x) { return x ? ret<T>::make(*x) : std::make_unique<Value>(); }
};
template <class... T> struct ret<std::tuple<T...>> {
  static std::string pyname() {
    std::string s = "tuple[";
    int i = 0;
    ((s += (i++ ? ", " : "") + ret<std::decay_t<T>>::pyname()), ...);
    return s + "]";
  }
  static std::string schema() {
    std::string s = "(";
    int i = 0;
    ((s += (i++ ? ", " : "") + ret<std::decay_t<T>>::schema()), ...);
    return s + ")";
  }
  static std::unique_ptr<Value> make(const std::tuple<T...>& x) {
    auto v = std::make_unique<Value>();
    v->kind = K_TUPLE;
    std::apply([&](const auto&... e) { (v->items.push_back(ret<std::decay_t<decltype(e)>>::make(e)), ...); }, x);
    return v;
  }
};
template <class A, class B> struct ret<std::pair<A, B>> {
  static std::string pyname() { return ret<std::tuple<A, B>>::pyname(); }
  static std::string schema() { return ret<std::tuple<A, B>>::schema(); }
  static std::unique_ptr<Value> make(const std::pair<A, B>& x) { return ret<std::tuple<A, B>>::make(std::make_tuple(x.first, x.second)); }
};

// The parameter and result types of a function pointer or of a lambda's operator().
template <class F> struct fn_traits : fn_traits<decltype(&F::operator())> {};
template <class R, class... A> struct fn_traits<R (*)(A...)> { using result = R; using args = std::tuple<A...>; };
template <class R, class... A> struct fn_traits<R(A...)> : fn_traits<R (*)(A...)> {};
template <class R, class C, class... A> struct fn_traits<R (C::*)(A...) const> : fn_traits<R (*)(A...)> {};
template <class R, class C, class... A> struct fn_traits<R (C::*)(A...)> : fn_traits<R (*)(A...)> {};

template <class T> using cast_t = caster<std::remove_cv_t<std::remove_reference_t<T>>>;

template <class F, class R, class... A, size_t... I>
std::unique_ptr<Value> invoke(F& f, const fgx_arg* args, const CallCtx& c, std::tuple<A...>*, std::index_sequence<I...>) {
  std::tuple<cast_t<A>...> cs;
  bool ok = true;
  ((ok = ok && std::get<I>(cs).load(args[I], c)), ...);
  if (!ok) throw bad_argument{};
  if constexpr (std::is_void<R>::value) {
    f(static_cast<A>(std::get<I>(cs).get())...);
    return std::make_unique<Value>();
  } else {
    return ret<std::remove_cv_t<std::remove_reference_t<R>>>::make(f(static_cast<A>(std::get<I>(cs).get())...));
  }
}
template <class R> std::string ret_pyname() {
  if constexpr (std::is_void<R>::value) return "None";
  else return ret<std::remove_cv_t<std::remove_reference_t<R>>>::pyname();
}
template <class R> std::string ret_schema() {
  if constexpr (std::is_void<R>::value) return "()";
  else return ret<std::remove_cv_t<std::remove_reference_t<R>>>::schema();
}

struct ArgSpec {
  std::string name, pyname, schema;
  bool has_default = false;
  int64_t dkind = K_NONE, dival = 0;
  double ddval = 0;
  std::string dsval;
};
struct Def {
  std::string name, doc, ret_pyname, ret_schema;
  std::vector<ArgSpec> args;
  std::function<std::unique_ptr<Value>(const fgx_arg*, const CallCtx&)> call;
};
struct Registry {
  std::string doc;
  std::vector<Def> defs;
  std::string info;  // fgx_ext_def_info's buffer
};

inline std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') { o += '\\'; o += static_cast<char>(ch); }
    else if (ch < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", ch); o += b; }
    else o += static_cast<char>(ch);
  }
  return o + "\"";
}
inline std::string def_json(const Def& d) {
  std::ostringstream os;
  os.precision(17);
  os << "{\"name\": " << json_str(d.name) << ", \"doc\": " << json_str(d.doc) << ", \"ret\": " << json_str(d.ret_pyname)
     << ", \"ret_schema\": " << json_str(d.ret_schema) << ", \"args\": [";
  for (size_t i = 0; i < d.args.size(); ++i) {
    const ArgSpec& a = d.args[i];
    os << (i ? ", " : "") << "{\"name\": " << json_str(a.name) << ", \"type\": " << json_str(a.pyname)
       << ", \"schema\": " << json_str(a.schema) << ", \"has_default\": " << (a.has_default ? "true" : "false")
       << ", \"dkind\": " << a.dkind << ", \"dival\": " << a.dival << ", \"ddval\": ";
    if (std::isfinite(a.ddval)) os << a.ddval; else os << "null";
    os << ", \"dsval\": " << json_str(a.dsval) << "}";
  }
  os << "]}";
  return os.str();
}
}  // namespace fgx

namespace pybind11 {
// py::arg("x") names a parameter (callers may pass it by keyword); py::arg("x") = v gives it a default.
struct arg_v;
struct arg {
  const char* name;
  constexpr explicit arg(const char* n) : name(n) {}
  template <class T> arg_v operator=(T&& value) const;
  arg& noconvert(bool = true) { return *this; }
  arg& none(bool = true) { return *this; }
};
struct arg_v : arg {
  int64_t kind = fgx::K_NONE, ival = 0;
  double dval = 0;
  std::string sval;
  bool representable = true;
  arg_v(const arg& a) : arg(a) {}
};
template <class T> arg_v arg::operator=(T&& value) const {
  using D = std::decay_t<T>;
  arg_v r(*this);
  if constexpr (std::is_same<D, bool>::value) { r.kind = fgx::K_BOOL; r.ival = value; }
  else if constexpr (std::is_integral<D>::value) { r.kind = fgx::K_INT; r.ival = static_cast<int64_t>(value); }
  else if constexpr (std::is_floating_point<D>::value) { r.kind = fgx::K_FLOAT; r.dval = static_cast<double>(value); }
  else if constexpr (std::is_same<D, c10::Scalar>::value) {
    if (value.isFloatingPoint()) { r.kind = fgx::K_FLOAT; r.dval = value.toDouble(); }
    else if (value.isBoolean()) { r.kind = fgx::K_BOOL; r.ival = value.toBool(); }
    else { r.kind = fgx::K_INT; r.ival = value.toLong(); }
  }
  else if constexpr (std::is_convertible<D, std::string>::value) { r.kind = fgx::K_STR; r.sval = std::string(value); }
  else if constexpr (std::is_same<D, std::nullptr_t>::value || std::is_same<D, std::nullopt_t>::value) { r.kind = fgx::K_NONE; }
  else { r.representable = false; }
  return r;
}
struct none { };
enum class return_value_policy { automatic, copy, move, reference, reference_internal, take_ownership };
template <class... T> struct call_guard { };
struct gil_scoped_release { };
struct gil_scoped_acquire { };
namespace literals {
inline arg operator"" _a(const char* name, size_t) { return arg(name); }
}  // namespace literals

class module_ {
 public:
  explicit module_(fgx::Registry* r) : r_(r) {}
  template <class F, class... Extra>
  module_& def(const char* name, F&& f, const Extra&... extra) {
    using Fn = std::decay_t<F>;
    using tr = fgx::fn_traits<std::remove_pointer_t<Fn>>;
    using R = typename tr::result;
    using Args = typename tr::args;
    constexpr size_t N = std::tuple_size<Args>::value;
    fgx::Def d;
    d.name = name;
    d.ret_pyname = fgx::ret_pyname<R>();
    d.ret_schema = fgx::ret_schema<R>();
    specs(d, static_cast<Args*>(nullptr), std::make_index_sequence<N>{});
    size_t named = 0;
    (apply_extra(d, named, extra), ...);
    (void)named;
    Fn fn = f;
    d.call = [fn](const fgx_arg* a, const fgx::CallCtx& c) mutable {
      return fgx::invoke<Fn, R>(fn, a, c, static_cast<Args*>(nullptr), std::make_index_sequence<N>{});
    };
    for (auto& old : r_->defs)
      if (old.name == d.name) { old = std::move(d); return *this; }  // pybind11 would add an overload; last wins here
    r_->defs.push_back(std::move(d));
    return *this;
  }
  std::string& doc() { return r_->doc; }
 private:
  template <class... A, size_t... I>
  static void specs(fgx::Def& d, std::tuple<A...>*, std::index_sequence<I...>) {
    (d.args.push_back(arg_spec("arg" + std::to_string(I), fgx::cast_t<A>::pyname(), fgx::cast_t<A>::schema())), ...);
  }
  static fgx::ArgSpec arg_spec(std::string name, std::string pyname, std::string schema) {
    fgx::ArgSpec s;
    s.name = std::move(name);
    s.pyname = std::move(pyname);
    s.schema = std::move(schema);
    return s;
  }
  static void apply_extra(fgx::Def& d, size_t&, const char* doc) { d.doc = doc; }
  static void apply_extra(fgx::Def& d, size_t& named, const arg& a) {
    if (named < d.args.size()) d.args[named].name = a.name;
    ++named;
  }
  static void apply_extra(fgx::Def& d, size_t& named, const arg_v& a) {
    if (named < d.args.size()) {
      fgx::ArgSpec& s = d.args[named];
      s.name = a.name;
      if (a.representable) { s.has_default = true; s.dkind = a.kind; s.dival = a.ival; s.ddval = a.dval; s.dsval = a.sval; }
    }
    ++named;
  }
  template <class T> static void apply_extra(fgx::Def&, size_t&, const T&) {}
  fgx::Registry* r_;
};
using module = module_;
}  // namespace pybind11
namespace py = pybind11;

// The C ABI funcgrad's cpp_extension loads (defined once per extension, by PYBIND11_MODULE).
#define FGX_DEFINE_EXTENSION_RUNTIME(INIT_BODY)                                                          \
  static ::fgx::Registry& fgx_ext_registry_() { static ::fgx::Registry r; return r; }                    \
  static std::atomic<bool> fgx_ext_down_{false};                                                          \
  static thread_local std::string fgx_ext_err_;                                                          \
  extern "C" FGX_EXPORT int64_t fgx_ext_abi_version() { return FGX_EXT_ABI_VERSION; }                     \
  extern "C" FGX_EXPORT int64_t fgx_ext_init() {                                                         \
    static std::once_flag once;                                                                         \
    static int64_t status = 0;                                                                          \
    std::call_once(once, [] {                                                                           \
      try { ::pybind11::module_ m(&fgx_ext_registry_()); INIT_BODY(m); }                                 \
      catch (const std::exception& e) { fgx_ext_err_ = e.what(); status = 1; }                          \
    });                                                                                                 \
    return status;                                                                                      \
  }                                                                                                     \
  extern "C" FGX_EXPORT const char* fgx_ext_module_doc() { return fgx_ext_registry_().doc.c_str(); }     \
  extern "C" FGX_EXPORT int64_t fgx_ext_num_defs() { return fgx_ext_registry_().defs.size(); }          \
  extern "C" FGX_EXPORT const char* fgx_ext_def_info(int64_t i) {                                       \
    fgx_ext_registry_().info = ::fgx::def_json(fgx_ext_registry_().defs.at(i));                          \
    return fgx_ext_registry_().info.c_str();                                                           \
  }                                                                                                     \
  extern "C" FGX_EXPORT const char* fgx_ext_last_error() { return fgx_ext_err_.c_str(); }               \
  extern "C" FGX_EXPORT void fgx_ext_shutdown() { fgx_ext_down_.store(true); }                          \
  /* 0 ok; 1 RuntimeError, 2 ValueError, 3 TypeError, 4 IndexError, 5 NotImplementedError, */          \
  /* 6 the arguments do not convert, 7 MemoryError, 8 OverflowError */                                 \
  extern "C" FGX_EXPORT int64_t fgx_ext_call(int64_t i, const fgx_arg* args, fgx_release_fn release,     \
                                              fgx_bump_fn bump, ::fgx::Value** out) {                   \
    ::fgx::BumpReport report{bump, {}};                                                                 \
    ::fgx::CallCtx ctx{release, &fgx_ext_down_, &report.args};                                          \
    try { *out = fgx_ext_registry_().defs.at(i).call(args, ctx).release(); return 0; }                 \
    catch (const ::fgx::bad_argument&) { return 6; }                                                    \
    catch (const ::c10::ValueError& e) { fgx_ext_err_ = e.what(); return 2; }                           \
    catch (const ::c10::TypeError& e) { fgx_ext_err_ = e.what(); return 3; }                            \
    catch (const ::c10::IndexError& e) { fgx_ext_err_ = e.what(); return 4; }                           \
    catch (const ::c10::NotImplementedError& e) { fgx_ext_err_ = e.what(); return 5; }                  \
    catch (const std::bad_alloc& e) { fgx_ext_err_ = e.what(); return 7; }                              \
    catch (const std::domain_error& e) { fgx_ext_err_ = e.what(); return 2; }                           \
    catch (const std::invalid_argument& e) { fgx_ext_err_ = e.what(); return 2; }                       \
    catch (const std::length_error& e) { fgx_ext_err_ = e.what(); return 2; }                           \
    catch (const std::out_of_range& e) { fgx_ext_err_ = e.what(); return 4; }                           \
    catch (const std::range_error& e) { fgx_ext_err_ = e.what(); return 2; }                            \
    catch (const std::overflow_error& e) { fgx_ext_err_ = e.what(); return 8; }                         \
    catch (const std::exception& e) { fgx_ext_err_ = e.what(); return 1; }                              \
    catch (...) { fgx_ext_err_ = "Caught an unknown exception!"; return 1; }                            \
  }                                                                                                     \
  extern "C" FGX_EXPORT int64_t fgx_ext_value_kind(const ::fgx::Value* v) { return v->kind; }           \
  extern "C" FGX_EXPORT int64_t fgx_ext_value_int(const ::fgx::Value* v) { return v->i; }              \
  extern "C" FGX_EXPORT double fgx_ext_value_float(const ::fgx::Value* v) { return v->d; }             \
  extern "C" FGX_EXPORT const char* fgx_ext_value_str(const ::fgx::Value* v) { return v->s.c_str(); }  \
  extern "C" FGX_EXPORT int64_t fgx_ext_value_len(const ::fgx::Value* v) { return v->items.size(); }   \
  extern "C" FGX_EXPORT ::fgx::Value* fgx_ext_value_item(const ::fgx::Value* v, int64_t i) {          \
    return v->items.at(i).get();                                                                        \
  }                                                                                                     \
  extern "C" FGX_EXPORT void fgx_ext_value_free(::fgx::Value* v) { delete v; }                          \
  /* A new reference to a result tensor (freed by fgx_ext_tensor_free), its layout in the out params. */ \
  extern "C" FGX_EXPORT ::at::Tensor* fgx_ext_tensor_ref(const ::fgx::Value* v, void** data,            \
                                                          int64_t* dtype, int64_t* ndim,                \
                                                          const int64_t** sizes,                        \
                                                          const int64_t** strides) {                    \
    auto* t = new ::at::Tensor(v->t);                                                                   \
    *data = t->data_ptr();                                                                              \
    *dtype = static_cast<int64_t>(t->scalar_type());                                                    \
    *ndim = t->dim();                                                                                   \
    *sizes = t->sizes().data();                                                                         \
    *strides = t->strides().data();                                                                     \
    return t;                                                                                           \
  }                                                                                                     \
  extern "C" FGX_EXPORT void fgx_ext_tensor_free(::at::Tensor* t) { delete t; }

#define FGX_CONCAT_(a, b) a##b
#define FGX_CONCAT(a, b) FGX_CONCAT_(a, b)
#ifdef FGX_PYTHON_MODULE
// Built by BuildExtension as an importable CPython extension: PyInit_<name> makes the module and lets
// funcgrad fill it with the functions (loaded from this same library through ctypes).
#include <Python.h>
#if !defined(_WIN32)
#include <dlfcn.h>
#endif
#define FGX_PYINIT(name)                                                                                 \
  static struct PyModuleDef fgx_ext_moddef_ = {PyModuleDef_HEAD_INIT, #name, nullptr, -1, nullptr,        \
                                               nullptr, nullptr, nullptr, nullptr};                       \
  extern "C" FGX_EXPORT PyObject* FGX_CONCAT(PyInit_, name)(void) {                                     \
    PyObject* m = PyModule_Create(&fgx_ext_moddef_);                                                   \
    if (!m) return nullptr;                                                                             \
    PyObject* cpp = PyImport_ImportModule("funcgrad.utils.cpp_extension");                             \
    const char* path = nullptr;                                                                         \
    FGX_LIBRARY_PATH(path);                                                                             \
    PyObject* r = cpp ? (path ? PyObject_CallMethod(cpp, "_populate_module", "Os", m, path)             \
                              : PyObject_CallMethod(cpp, "_populate_module", "O", m)) : nullptr;        \
    Py_XDECREF(cpp);                                                                                    \
    if (!r) { Py_DECREF(m); return nullptr; }                                                           \
    Py_DECREF(r);                                                                                       \
    return m;                                                                                           \
  }
#if defined(_WIN32)
#define FGX_LIBRARY_PATH(p)
#else
// this library's own file (dladdr of one of its functions)
#define FGX_LIBRARY_PATH(p) do { Dl_info info_; if (dladdr((void*)&fgx_ext_init, &info_)) p = info_.dli_fname; } while (0)
#endif
#else
#define FGX_PYINIT(name)
#endif

#define PYBIND11_MODULE(name, variable, ...)                                                             \
  static void fgx_ext_module_body_(::pybind11::module_& variable);                                       \
  FGX_DEFINE_EXTENSION_RUNTIME(fgx_ext_module_body_)                                                     \
  FGX_PYINIT(name)                                                                                       \
  static void fgx_ext_module_body_(::pybind11::module_& variable)
