// File: models/collectives/plugins/examples/not_a_plugin.cc
//
// A shared library that is not a collective plug-in (it exports neither
// entry point of ../plugin_api.h), for the loader's missing-symbol test.

extern "C" int some_other_library_function(void) { return 42; }
