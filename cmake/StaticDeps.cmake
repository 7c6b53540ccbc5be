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

# FL_CLI_STATIC: the faultline command linked without libfaultline.so and
# with the static archives of its dependencies where they exist.
#
# A run's start-up is serial: before the archive, the dynamic loader mapped
# ~40 shared objects (libfaultline, libcrypto, Hyperscan, RE2, ~30 Abseil
# libraries, ...) and bound ~7,500 symbols, libcrypto's alone ~3,400 (it is
# linked with -z now): ~10 M instructions, 38% of a one-line run. An
# executable can take what a shared object cannot (libhs.a's PIE code,
# Abseil's and RE2's local-exec TLS), so only libstdc++, glibc, simdjson and
# ISA-L (no .a shipped) stay shared. libfaultline.so is built as before for
# the bindings, the C ABI and its checks; the command calls the same C API
# (capi.cc's objects) and so still uses the public header only.
#
# The modules link their dependencies by the imported targets' names, and an
# imported shared library's location cannot depend on who links it. So
# fl_link_static_deps gives each imported dependency with a .a beside its
# .so a static twin (fl_static::<name>, its own dependencies twinned the
# same way), and rewrites the modules' references to those dependencies as
# $<IF:$<BOOL:$<TARGET_PROPERTY:FL_LINK_STATIC_DEPS>>,twin,original>: the
# condition is evaluated on the target being linked, so the command (which
# sets FL_LINK_STATIC_DEPS) gets the twins and libfaultline.so, the tests
# and the benchmarks the shared libraries, as before.

# The .a beside a shared library path (libX.so or libX.so.N...), or "".
function(_fl_static_archive_of path out)
  set(${out} "" PARENT_SCOPE)
  if(path MATCHES "^(/.*/lib[^/]+)\\.so(\\.[0-9.]+)?$")
    if(EXISTS "${CMAKE_MATCH_1}.a")
      set(${out} "${CMAKE_MATCH_1}.a" PARENT_SCOPE)
    endif()
  endif()
endfunction()

# The imported target's shared library file, or "" (interface targets).
function(_fl_imported_location t out)
  set(loc "")
  get_target_property(type ${t} TYPE)
  if(type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "UNKNOWN_LIBRARY")
    get_target_property(loc ${t} IMPORTED_LOCATION)
    if(NOT loc)
      set(loc "")
      get_target_property(configs ${t} IMPORTED_CONFIGURATIONS)
      if(configs)
        foreach(c IN LISTS configs)
          get_target_property(l ${t} IMPORTED_LOCATION_${c})
          if(l)
            set(loc "${l}")
            break()
          endif()
        endforeach()
      endif()
    endif()
  endif()
  set(${out} "${loc}" PARENT_SCOPE)
endfunction()

# One link item as a static consumer should see it; <changed> is TRUE when
# that differs from the item.
function(_fl_static_item item out changed)
  set(${changed} FALSE PARENT_SCOPE)
  set(${out} "${item}" PARENT_SCOPE)
  if(item MATCHES "^\\$<LINK_ONLY:([^<>$]+)>$")
    _fl_static_item("${CMAKE_MATCH_1}" inner inner_changed)
    if(inner_changed)
      set(${out} "$<LINK_ONLY:${inner}>" PARENT_SCOPE)
      set(${changed} TRUE PARENT_SCOPE)
    endif()
  elseif(TARGET "${item}")
    get_target_property(imported "${item}" IMPORTED)
    if(imported)
      fl_static_twin("${item}" twin)
      if(NOT twin STREQUAL item)
        set(${out} "${twin}" PARENT_SCOPE)
        set(${changed} TRUE PARENT_SCOPE)
      endif()
    endif()
  elseif(IS_ABSOLUTE "${item}")
    _fl_static_archive_of("${item}" archive)
    if(archive)
      set(${out} "${archive}" PARENT_SCOPE)
      set(${changed} TRUE PARENT_SCOPE)
      set_property(GLOBAL APPEND PROPERTY FL_STATIC_ARCHIVES ${archive})
    endif()
  endif()
endfunction()

# fl_static_twin(<imported target> <out-var>): the target a static consumer
# links instead of <imported target>: fl_static::<name> when the target or
# one of its dependencies has a static archive, else the target itself.
function(fl_static_twin t out)
  get_property(done GLOBAL PROPERTY "FL_STATIC_TWIN_OF_${t}" SET)
  if(done)
    get_property(twin GLOBAL PROPERTY "FL_STATIC_TWIN_OF_${t}")
    set(${out} "${twin}" PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "FL_STATIC_TWIN_OF_${t}" "${t}")  # a cycle ends here
  _fl_imported_location(${t} loc)
  set(archive "")
  if(loc)
    _fl_static_archive_of("${loc}" archive)
  endif()
  get_target_property(deps ${t} INTERFACE_LINK_LIBRARIES)
  set(new_deps "")
  set(any_changed FALSE)
  if(deps)
    foreach(item IN LISTS deps)
      _fl_static_item("${item}" new_item item_changed)
      if(item_changed)
        set(any_changed TRUE)
      endif()
      list(APPEND new_deps "${new_item}")
    endforeach()
  endif()
  if(NOT archive AND NOT any_changed)
    set(${out} "${t}" PARENT_SCOPE)
    return()
  endif()
  string(MAKE_C_IDENTIFIER "${t}" id)
  set(twin "fl_static::${id}")
  if(archive)
    add_library(${twin} STATIC IMPORTED GLOBAL)
    set_target_properties(${twin} PROPERTIES IMPORTED_LOCATION "${archive}")
  elseif(loc)
    # A shared library without an archive whose dependencies have one.
    add_library(${twin} UNKNOWN IMPORTED GLOBAL)
    set_target_properties(${twin} PROPERTIES IMPORTED_LOCATION "${loc}")
  else()
    add_library(${twin} INTERFACE IMPORTED GLOBAL)
  endif()
  set_target_properties(${twin} PROPERTIES INTERFACE_LINK_LIBRARIES "${new_deps}")
  foreach(p INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES
            INTERFACE_COMPILE_DEFINITIONS INTERFACE_COMPILE_OPTIONS
            INTERFACE_COMPILE_FEATURES INTERFACE_LINK_OPTIONS)
    get_target_property(v ${t} ${p})
    if(v)
      set_target_properties(${twin} PROPERTIES ${p} "${v}")
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "FL_STATIC_TWIN_OF_${t}" "${twin}")
  set_property(GLOBAL APPEND PROPERTY FL_STATIC_ARCHIVES ${archive})
  set(${out} "${twin}" PARENT_SCOPE)
endfunction()

# fl_link_static_deps(<executable>): <executable> links the static twins of
# the imported dependencies it reaches through the project's own targets
# (and directly); every other consumer of those targets is unchanged.
function(fl_link_static_deps consumer)
  set_target_properties(${consumer} PROPERTIES FL_LINK_STATIC_DEPS ON)
  set(queue ${consumer})
  set(seen "")
  while(queue)
    list(POP_FRONT queue t)
    if(t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${t})
    foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(items ${t} ${prop})
      if(NOT items)
        continue()
      endif()
      set(new_items "")
      set(any_changed FALSE)
      foreach(item IN LISTS items)
        set(name "${item}")
        if(item MATCHES "^\\$<LINK_ONLY:([^<>$]+)>$")
          set(name "${CMAKE_MATCH_1}")
        endif()
        if(TARGET "${name}")
          get_target_property(imported "${name}" IMPORTED)
          if(NOT imported)
            list(APPEND queue "${name}")
          endif()
        endif()
        _fl_static_item("${item}" static_item item_changed)
        if(item_changed AND t STREQUAL consumer)
          set(item "${static_item}")
          set(any_changed TRUE)
        elseif(item_changed)
          if(item MATCHES "^\\$<LINK_ONLY:")
            _fl_static_item("${name}" static_name unused)
            set(item "$<LINK_ONLY:$<IF:$<BOOL:$<TARGET_PROPERTY:FL_LINK_STATIC_DEPS>>,${static_name},${name}>>")
          else()
            set(item "$<IF:$<BOOL:$<TARGET_PROPERTY:FL_LINK_STATIC_DEPS>>,${static_item},${item}>")
          endif()
          set(any_changed TRUE)
        endif()
        list(APPEND new_items "${item}")
      endforeach()
      if(any_changed)
        set_property(TARGET ${t} PROPERTY ${prop} "${new_items}")
      endif()
    endforeach()
  endwhile()
  get_property(archives GLOBAL PROPERTY FL_STATIC_ARCHIVES)
  list(REMOVE_DUPLICATES archives)
  set_property(GLOBAL PROPERTY FL_STATIC_ARCHIVES "${archives}")
  list(LENGTH archives n)
  message(STATUS "FL_CLI_STATIC: ${consumer} links ${n} static archives")
endfunction()
