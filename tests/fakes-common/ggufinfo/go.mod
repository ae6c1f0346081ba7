module sunny/ggufinfo

go 1.19
