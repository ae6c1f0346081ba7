module sunny/fakeollama

go 1.19

require sunny/ggufinfo v0.0.0

replace sunny/ggufinfo => ../fakes-common/ggufinfo
