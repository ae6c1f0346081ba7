module sunny/modelfile_parse

go 1.19
