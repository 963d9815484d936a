"""ROS 2 message definitions the rosbags tests register (rosbags' stores carry neither package):
vision_msgs 4.x (ROS 2 Humble and later, from docs.ros.org) and foxglove_msgs as Foxglove publishes
them for ROS 2 (docs.foxglove.dev). Types of the ROS 2 names, .msg text as rosbag2 stores it."""

VISION_MSGS = {
    "vision_msgs/msg/Detection2DArray": "std_msgs/Header header\nvision_msgs/Detection2D[] detections\n",
    "vision_msgs/msg/Detection2D": "std_msgs/Header header\nvision_msgs/ObjectHypothesisWithPose[] results\n"
                                   "vision_msgs/BoundingBox2D bbox\nstring id\n",
    "vision_msgs/msg/ObjectHypothesisWithPose": "vision_msgs/ObjectHypothesis hypothesis\n"
                                                "geometry_msgs/PoseWithCovariance pose\n",
    "vision_msgs/msg/ObjectHypothesis": "string class_id\nfloat64 score\n",
    "vision_msgs/msg/BoundingBox2D": "vision_msgs/Pose2D center\nfloat64 size_x\nfloat64 size_y\n",
    "vision_msgs/msg/Pose2D": "vision_msgs/Point2D position\nfloat64 theta\n",
    "vision_msgs/msg/Point2D": "float64 x\nfloat64 y\n",
}

FOXGLOVE_MSGS = {
    "foxglove_msgs/msg/Point2": "float64 x\nfloat64 y\n",
    "foxglove_msgs/msg/Color": "float64 r\nfloat64 g\nfloat64 b\nfloat64 a\n",
    "foxglove_msgs/msg/CircleAnnotation": "builtin_interfaces/Time timestamp\nfoxglove_msgs/Point2 position\n"
                                          "float64 diameter\nfloat64 thickness\nfoxglove_msgs/Color fill_color\n"
                                          "foxglove_msgs/Color outline_color\n",
    "foxglove_msgs/msg/PointsAnnotation": "builtin_interfaces/Time timestamp\nuint8 UNKNOWN=0\nuint8 POINTS=1\n"
                                          "uint8 LINE_LOOP=2\nuint8 LINE_STRIP=3\nuint8 LINE_LIST=4\nuint8 type\n"
                                          "foxglove_msgs/Point2[] points\nfoxglove_msgs/Color outline_color\n"
                                          "foxglove_msgs/Color[] outline_colors\nfoxglove_msgs/Color fill_color\n"
                                          "float64 thickness\n",
    "foxglove_msgs/msg/TextAnnotation": "builtin_interfaces/Time timestamp\nfoxglove_msgs/Point2 position\n"
                                        "string text\nfloat64 font_size\nfoxglove_msgs/Color text_color\n"
                                        "foxglove_msgs/Color background_color\n",
    "foxglove_msgs/msg/ImageAnnotations": "foxglove_msgs/CircleAnnotation[] circles\n"
                                          "foxglove_msgs/PointsAnnotation[] points\n"
                                          "foxglove_msgs/TextAnnotation[] texts\n",
    "foxglove_msgs/msg/CompressedVideo": "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\n"
                                         "string format\n",
}
