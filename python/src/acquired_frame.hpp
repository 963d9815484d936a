#pragma once
// handoff.AcquiredFrame and handoff.AcquiredPlane: a buffer handed out for
// writing, with no copy (Viewer.acquire: a buffer of the viewer's ring;
// Publisher.acquire: a shared slot), its planes writable through DLPack,
// __array_interface__ (host) and __cuda_array_interface__ (CUDA).
// Not a public header (python/src only).
//
// Ownership: the frame's `owner` holds the buffer (the ViewerFrame or
// PublishSlot), and every export (a DLPack tensor, a plane object) holds a copy
// of it. present() needs every export gone (the buffer changes hands);
// otherwise the frame is not presented and the buffer goes back when the last
// export goes. Thread safety: with the GIL held, one thread at a time.
#include "module_common.hpp"

#include <handoff/frame.hpp>
#include <handoff/media/overlay.hpp>

#include <nanobind/nanobind.h>

#include <functional>
#include <memory>

namespace handoff::py {

struct AcquiredState {
  Frame frame;                    // owner: holds the buffer
  media::OverlayFrame overlays;  // set_overlays()
  bool done = false;              // presented or given back
  // Hands the buffer on (shown, announced) with `frame`'s index and timestamp
  // and `overlays`; called without the GIL, with `owner` the buffer's last
  // reference and the CUDA writes already synchronised. May throw.
  std::function<void(std::shared_ptr<const void> owner, const Frame& frame, const media::OverlayFrame& overlays)>
      present;
};

struct PyAcquired {
  nb::object source;  // the handoff.Viewer / handoff.Publisher it came from (kept alive)
  std::shared_ptr<AcquiredState> state;
};

// A PyAcquired over `owner`'s writable `frame` (frame.owner is set to `owner`).
PyAcquired make_acquired(nb::handle source, Frame frame, std::shared_ptr<const void> owner,
                         decltype(AcquiredState::present) present);

// Adds AcquiredPlane and AcquiredFrame to the module.
void bind_acquired(nb::module_& m);

}  // namespace handoff::py
