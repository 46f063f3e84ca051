"""Images to a symbolic scene: YOLO detection, object-affordance detection (OAD), spatial relations,
image conversion, and the pipeline that joins them."""
