// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The seed's error classes. Every message names the argument and the value.

#include <stdexcept>
#include <string>

namespace mmaemu {

// Base of every mmaemu error.
class MmaemuError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  virtual const char* class_name() const noexcept { return "MmaemuError"; }
};

// An argument has a bad value (the seed's ValueError).
class ValueError : public MmaemuError {
public:
  using MmaemuError::MmaemuError;
  const char* class_name() const noexcept override { return "ValueError"; }
};

// torch 2.7.1 or the profile's cuBLAS rejects the call.
class ReferenceRejectsError : public MmaemuError {
public:
  using MmaemuError::MmaemuError;
  const char* class_name() const noexcept override { return "ReferenceRejectsError"; }
};

// Bias, row-wise scales, grad mode, uncharacterised preset features.
class UnsupportedFeatureError : public MmaemuError {
public:
  using MmaemuError::MmaemuError;
  const char* class_name() const noexcept override { return "UnsupportedFeatureError"; }
};

// splitk="auto" cannot decide.
class SplitKUnknownError : public MmaemuError {
public:
  using MmaemuError::MmaemuError;
  const char* class_name() const noexcept override { return "SplitKUnknownError"; }
};

// An explicitly requested backend cannot serve the call.
class BackendUnavailableError : public MmaemuError {
public:
  using MmaemuError::MmaemuError;
  const char* class_name() const noexcept override { return "BackendUnavailableError"; }
};

} // namespace mmaemu
