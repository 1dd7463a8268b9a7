// GoogleTest entry for SystemC: libsystemc supplies main() and calls sc_main. Every SystemC
// warning fails the test, so silent misuse (duplicate names, double sc_stop) cannot pass.
#include <gtest/gtest.h>

#include <systemc>

#include "models/platform/clock.h"

int sc_main(int argc, char* argv[]) {
  ars::init_time_resolution();
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_THROW);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
