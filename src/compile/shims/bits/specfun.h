// kernelrl compile shim: stands in for libstdc++'s <bits/specfun.h> in native candidate compiles.
//
// In C++17 mode <cmath> pulls in the mathematical special functions (std::cyl_bessel_j,
// std::riemann_zeta, ...: several thousand lines of host-only templates). A kernel cannot call
// them, yet nvcc's front end and host compiler parse them in every compile: about 30% of a native
// compile's time. This empty header takes their place on the candidate include path (docs/abi.md
// says so), keeping C++17 itself.
#pragma once
