# 이미지 생성 마지막 부분
"""
 Allocated memory      |  17287 MiB |  17324 MiB |   5663 GiB |   5646 GiB |
|       from large pool |  17256 MiB |  17293 MiB |   5553 GiB |   5536 GiB |
|       from small pool |     31 MiB |    105 MiB |    109 GiB |    109 GiB |
|---------------------------------------------------------------------------|
| Active memory         |  17287 MiB |  17324 MiB |   5663 GiB |   5646 GiB |
|       from large pool |  17256 MiB |  17293 MiB |   5553 GiB |   5536 GiB |
|       from small pool |     31 MiB |    105 MiB |    109 GiB |    109 GiB |
|---------------------------------------------------------------------------|
| Requested memory      |  17264 MiB |  17300 MiB |   5611 GiB |   5594 GiB |
|       from large pool |  17232 MiB |  17269 MiB |   5502 GiB |   5485 GiB |
|       from small pool |     31 MiB |    105 MiB |    108 GiB |    108 GiB 
"""
