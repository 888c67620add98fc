{
  "targets": [
    {
      "target_name": "outpost_icmp",
      "sources": ["native/icmp.c"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"],
      "cflags": ["-std=c11", "-Wall", "-Wextra", "-O2"],
      "conditions": [
        ["OS!='linux'", { "type": "none", "sources!": ["native/icmp.c"] }]
      ]
    }
  ]
}
