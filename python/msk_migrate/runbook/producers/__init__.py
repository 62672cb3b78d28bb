"""Moving a wave's producers: the fence on the source (:mod:`.fence`), the watch that proves it holds
(:mod:`.watch`), the producer gate and its certificate (:mod:`.gate`), and ``cutover run|confirm|abort``
(:mod:`.cutover`)."""
