# FL_STATIC_DEPS: points imported dependency targets at their static archives.
#
# The Python wheel must run where the dependencies' shared libraries are not
# installed. What can be linked into libfaultline need not be bundled beside
# it by auditwheel repair; the version script keeps every symbol but fl_*
# local, so an absorbed copy cannot clash with another copy a host process
# has loaded. A .a can only go into a shared object if it was compiled as
# position-independent code. On Debian 12 that holds for zstd and zlib only:
# libhs.a (Vectorscan) is PIE code (R_X86_64_PC32 against libstdc++ and
# glibc symbols), libre2.a and libabsl_{base,raw_hash_set,...}.a use the
# local-exec TLS model (R_X86_64_TPOFF32), simdjson and ISA-L ship no .a.
# Those stay shared libraries, which the wheel build bundles.

# Replaces, in the imported locations and link interface of each target, a
# shared library path (libX.so or libX.so.N...) by libX.a in the same
# directory when that file exists.
function(fl_prefer_static_archives)
  set(swapped "")
  foreach(t IN LISTS ARGN)
    if(NOT TARGET ${t})
      continue()
    endif()
    get_target_property(configs ${t} IMPORTED_CONFIGURATIONS)
    set(props IMPORTED_LOCATION INTERFACE_LINK_LIBRARIES)
    if(configs)
      foreach(c IN LISTS configs)
        list(APPEND props IMPORTED_LOCATION_${c})
      endforeach()
    endif()
    foreach(prop IN LISTS props)
      get_target_property(value ${t} ${prop})
      if(NOT value)
        continue()
      endif()
      set(new_value "")
      foreach(item IN LISTS value)
        # Two ifs: ${CMAKE_MATCH_1} in the same condition would be expanded
        # before the match runs.
        if(item MATCHES "^(/.*/lib[^/]+)\\.so(\\.[0-9.]+)?$")
          if(EXISTS "${CMAKE_MATCH_1}.a")
            set(item "${CMAKE_MATCH_1}.a")
            list(APPEND swapped ${item})
          endif()
        endif()
        list(APPEND new_value "${item}")
      endforeach()
      set_target_properties(${t} PROPERTIES ${prop} "${new_value}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES swapped)
  message(STATUS "FL_STATIC_DEPS: linking ${swapped}")
endfunction()
